//go:build cuda

// The CUDA backend is a build tag, as it is a cargo feature of TEI's: the
// stand-in toolchain sets it for the templates of the CUDA linking modes,
// whose link names libcuda.so.1 (CGO_LDFLAGS). Without the tag the router is
// the CPU one (nocuda.go), which links on any host, so that `go build ./...`
// needs no libcuda.

package main

/*
// The driver API calls of TEI's gate, as cuda.h declares them (CUdevice is
// an int, CUresult an enum). libcuda.so.1 is linked by the template's
// build (CGO_LDFLAGS), not named here.
extern int cuInit(unsigned int flags);
extern int cuDeviceGet(int *device, int ordinal);
extern int cuDeviceGetAttribute(int *value, int attrib, int device);
*/
import "C"

// driver calls libcuda.so.1.
type driver struct{}

// Init implements tei.Driver.
func (driver) Init() int { return int(C.cuInit(0)) }

// ComputeCapability implements tei.Driver: attributes 75 and 76,
// CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR.
func (driver) ComputeCapability() (major, minor, rc int) {
	var dev, maj, mnr C.int
	if r := C.cuDeviceGet(&dev, 0); r != 0 {
		return 0, 0, int(r)
	}
	if r := C.cuDeviceGetAttribute(&maj, 75, dev); r != 0 {
		return 0, 0, int(r)
	}
	if r := C.cuDeviceGetAttribute(&mnr, 76, dev); r != 0 {
		return 0, 0, int(r)
	}
	return int(maj), int(mnr), 0
}
