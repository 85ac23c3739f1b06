//go:build !linux

package main

import (
	"errors"
	"time"
)

// errNoLoopback: the serving check's sockets are Linux's (loopback_linux.go).
var errNoLoopback = errors.New("the serving check runs on Linux only")

// loopConn is absent off Linux.
type loopConn struct{}

func dialLoopback(int, time.Duration) (*loopConn, error) { return nil, errNoLoopback }
func (*loopConn) Read([]byte) (int, error)               { return 0, errNoLoopback }
func (*loopConn) Write([]byte) (int, error)              { return 0, errNoLoopback }
func (*loopConn) Close() error                           { return nil }
func freeLoopbackPort() (int, error)                     { return 0, errNoLoopback }
