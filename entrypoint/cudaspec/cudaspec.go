// Package cudaspec is the CUDA driver's own names for its error codes
// (CUresult), shared by jetbake-cudaprobe, which names a failed call with
// them when the driver cannot, and the test bed's stand-in router, which
// prints the errors the stand-in driver returns as TEI's cudarc does.
package cudaspec

// driverErrorNames names the CUresult codes a probe is likely to meet
// (CUDA's cuda.h, CUresult:
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html).
// Each is the name NVIDIA's driver gives (cudaprobe's
// TestRealDriverErrorNames holds it against the driver's cuGetErrorName).
// The CUDA runtime's codes are another list: cudaErrorInsufficientDriver
// (35) is the runtime's, and the driver names no CUresult 35.
var driverErrorNames = map[int32]string{
	1:   "CUDA_ERROR_INVALID_VALUE",
	2:   "CUDA_ERROR_OUT_OF_MEMORY",
	3:   "CUDA_ERROR_NOT_INITIALIZED",
	4:   "CUDA_ERROR_DEINITIALIZED",
	34:  "CUDA_ERROR_STUB_LIBRARY",
	46:  "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE",
	101: "CUDA_ERROR_INVALID_DEVICE",
	200: "CUDA_ERROR_INVALID_IMAGE",
	201: "CUDA_ERROR_INVALID_CONTEXT",
	209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	214: "CUDA_ERROR_ECC_UNCORRECTABLE",
	218: "CUDA_ERROR_INVALID_PTX",
	221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
	222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
	300: "CUDA_ERROR_INVALID_SOURCE",
	304: "CUDA_ERROR_OPERATING_SYSTEM",
	400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND",
	700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
	702: "CUDA_ERROR_LAUNCH_TIMEOUT",
	709: "CUDA_ERROR_CONTEXT_IS_DESTROYED",
	714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
	715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS",
	717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
	718: "CUDA_ERROR_INVALID_PC",
	719: "CUDA_ERROR_LAUNCH_FAILED",
	800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED",
	802: "CUDA_ERROR_SYSTEM_NOT_READY",
	803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
	999: "CUDA_ERROR_UNKNOWN",
}

// DriverErrorName is the driver's name of CUresult code, such as
// "CUDA_ERROR_NO_DEVICE" for 100, or "" when the table has none (the
// driver names no 35: that is the CUDA runtime's cudaErrorInsufficientDriver).
func DriverErrorName(code int32) string { return driverErrorNames[code] }

// DriverErrorNames returns a copy of the table, code to name.
func DriverErrorNames() map[int32]string {
	out := make(map[int32]string, len(driverErrorNames))
	for code, name := range driverErrorNames {
		out[code] = name
	}
	return out
}
