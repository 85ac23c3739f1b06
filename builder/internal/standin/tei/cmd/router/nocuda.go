//go:build !cuda

package main

// driver is absent from a router built without the CUDA backend, which
// never asks for a GPU.
type driver struct{}

// Init implements tei.Driver.
func (driver) Init() int { return 100 }

// ComputeCapability implements tei.Driver.
func (driver) ComputeCapability() (int, int, int) { return 0, 0, 100 }
