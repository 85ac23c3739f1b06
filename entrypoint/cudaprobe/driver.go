package main

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CUDA driver API device attributes (CUdevice_attribute) the probe reads.
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// errorNames names the CUresult codes a probe is likely to meet, for drivers
// whose cuGetErrorName is missing or fails.
var errorNames = map[int32]string{
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	35:  "CUDA_ERROR_INSUFFICIENT_DRIVER",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// driverAPI holds the driver functions the probe calls.
type driverAPI struct {
	cuInit               func(flags uint32) int32
	cuDeviceGet          func(dev *int32, ordinal int32) int32
	cuDeviceGetAttribute func(value *int32, attrib int32, dev int32) int32
	cuDriverGetVersion   func(version *int32) int32
	// cuGetErrorName is nil when the library lacks it.
	cuGetErrorName func(code int32, name **byte) int32
}

// probe loads the driver library at path and queries device 0.
func probe(path string) (result, error) {
	api, err := load(path)
	if err != nil {
		return result{}, err
	}
	var dev, major, minor, version int32
	if err := api.check("cuInit", api.cuInit(0)); err != nil {
		return result{}, err
	}
	if err := api.check("cuDeviceGet", api.cuDeviceGet(&dev, 0)); err != nil {
		return result{}, err
	}
	if err := api.check("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)",
		api.cuDeviceGetAttribute(&major, attrComputeCapabilityMajor, dev)); err != nil {
		return result{}, err
	}
	if err := api.check("cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)",
		api.cuDeviceGetAttribute(&minor, attrComputeCapabilityMinor, dev)); err != nil {
		return result{}, err
	}
	if err := api.check("cuDriverGetVersion", api.cuDriverGetVersion(&version)); err != nil {
		return result{}, err
	}
	return result{Major: int(major), Minor: int(minor), DriverVersion: int(version)}, nil
}

// driverVersion loads the driver library at path and calls
// cuDriverGetVersion alone: no cuInit, no device query.
func driverVersion(path string) (versionResult, error) {
	api, err := loadFuncs(path, true)
	if err != nil {
		return versionResult{}, err
	}
	var version int32
	if err := api.check("cuDriverGetVersion", api.cuDriverGetVersion(&version)); err != nil {
		return versionResult{}, err
	}
	return versionResult{DriverVersion: int(version)}, nil
}

// load opens the library and resolves every function the probe needs.
func load(path string) (*driverAPI, error) {
	return loadFuncs(path, false)
}

// loadFuncs opens the library and resolves cuDriverGetVersion, and unless
// versionOnly the device calls too.
func loadFuncs(path string, versionOnly bool) (*driverAPI, error) {
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("dlopen %s failed: %w", path, err)
	}
	api := &driverAPI{}
	required := []struct {
		name string
		fptr any
	}{
		{"cuDriverGetVersion", &api.cuDriverGetVersion},
		{"cuInit", &api.cuInit},
		{"cuDeviceGet", &api.cuDeviceGet},
		{"cuDeviceGetAttribute", &api.cuDeviceGetAttribute},
	}
	if versionOnly {
		required = required[:1]
	}
	for _, fn := range required {
		sym, err := purego.Dlsym(lib, fn.name)
		if err != nil {
			return nil, fmt.Errorf("%s has no %s: it is not a CUDA driver", path, fn.name)
		}
		purego.RegisterFunc(fn.fptr, sym)
	}
	if sym, err := purego.Dlsym(lib, "cuGetErrorName"); err == nil {
		purego.RegisterFunc(&api.cuGetErrorName, sym)
	}
	return api, nil
}

// check turns a CUresult into an error naming the call, or nil for CUDA_SUCCESS.
func (api *driverAPI) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	return errors.New(call + " failed: " + api.errorName(code) + fmt.Sprintf(" (%d)", code))
}

// errorName names a CUresult, asking the driver first.
func (api *driverAPI) errorName(code int32) string {
	if api.cuGetErrorName != nil {
		var name *byte
		if api.cuGetErrorName(code, &name) == 0 && name != nil {
			return goString(name)
		}
	}
	if name, ok := errorNames[code]; ok {
		return name
	}
	return "CUDA error"
}

// goString copies a NUL-terminated C string of at most 256 bytes.
func goString(p *byte) string {
	var buf []byte
	for i := 0; i < 256; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		buf = append(buf, c)
	}
	return string(buf)
}
