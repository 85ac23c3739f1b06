package main

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/jetbake/jetbake/entrypoint/cudaspec"
)

// CUDA driver API device attributes (CUdevice_attribute) the probe reads.
const (
	attrComputeCapabilityMajor = 75
	attrComputeCapabilityMinor = 76
)

// driverAPI holds the driver functions the probe calls.
type driverAPI struct {
	// lib is the dlopen handle of the library at path.
	lib                  uintptr
	path                 string
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
	api := &driverAPI{lib: lib, path: path}
	required := []symbol{
		{[]string{"cuDriverGetVersion"}, &api.cuDriverGetVersion},
		{[]string{"cuInit"}, &api.cuInit},
		{[]string{"cuDeviceGet"}, &api.cuDeviceGet},
		{[]string{"cuDeviceGetAttribute"}, &api.cuDeviceGetAttribute},
	}
	if versionOnly {
		required = required[:1]
	}
	if err := api.resolve(required); err != nil {
		return nil, err
	}
	if sym, err := purego.Dlsym(lib, "cuGetErrorName"); err == nil {
		purego.RegisterFunc(&api.cuGetErrorName, sym)
	}
	return api, nil
}

// symbol is a driver function to resolve: its exported names, the one
// cuda.h maps the call to first, and the function variable to register.
type symbol struct {
	names []string
	fptr  any
}

// resolve registers each symbol under the first of its names the library
// exports, and names the call a library without any of them lacks.
func (api *driverAPI) resolve(symbols []symbol) error {
	for _, s := range symbols {
		var sym uintptr
		var err error
		for _, name := range s.names {
			if sym, err = purego.Dlsym(api.lib, name); err == nil {
				break
			}
		}
		if err != nil {
			return &missingError{path: api.path, name: s.names[0]}
		}
		purego.RegisterFunc(s.fptr, sym)
	}
	return nil
}

// missingError is a library that lacks a driver call.
type missingError struct {
	path, name string
}

func (e *missingError) Error() string {
	return e.path + " has no " + e.name + ": it is not a CUDA driver"
}

// callError is a driver call that returned an error CUresult.
type callError struct {
	// call names the call, such as "cuInit" or
	// "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)".
	call string
	// name is the CUresult's name ("" when neither the driver nor the
	// table knows it) and code its number.
	name string
	code int32
}

func (e *callError) Error() string {
	name := e.name
	if name == "" {
		name = "CUDA error"
	}
	return e.call + " failed: " + name + fmt.Sprintf(" (%d)", e.code)
}

// check turns a CUresult into an error naming the call, or nil for CUDA_SUCCESS.
func (api *driverAPI) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	return &callError{call: call, name: api.cudaName(code), code: code}
}

// cudaName is the CUresult's name (CUDA_ERROR_...), asking the driver first,
// then cudaspec's table (for drivers whose cuGetErrorName is missing or
// fails), or "".
func (api *driverAPI) cudaName(code int32) string {
	if api.cuGetErrorName != nil {
		var name *byte
		if api.cuGetErrorName(code, &name) == 0 && name != nil {
			return goString(name)
		}
	}
	return cudaspec.DriverErrorName(code)
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
