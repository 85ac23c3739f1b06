/*
 * The stand-in CUDA driver: a real shared object with the soname
 * libcuda.so.1 that exports the driver API calls jetbake-cudaprobe and the
 * stand-in router make, and answers them as a Jetson's driver would. It is
 * built for amd64 (gcc) and aarch64 (aarch64-linux-gnu-gcc) by
 * builder/internal/standin (BuildLibcuda), for each fake host with that
 * host's answers compiled in, as a real driver belongs to its host:
 *   -DJB_CC_MAJOR=8 -DJB_CC_MINOR=7   the GPU's compute capability
 *   -DJB_DRIVER_VERSION=12060         cuDriverGetVersion, 1000*major + 10*minor
 *   -DJB_DEVICE_NAME='"Orin"'         cuDeviceGetName
 * With -DJB_STUB it is CUDA's link-time stub instead (stubs/libcuda.so in the
 * CUDA devel images, soname libcuda.so.1): every call fails with
 * CUDA_ERROR_STUB_LIBRARY (34), so a program that links libcuda loads, and a
 * program that asks the GPU anything learns that there is no driver.
 * With -DOMIT_DRIVER_VERSION it lacks cuDriverGetVersion (not a driver).
 *
 * Environment variables override the compiled-in answers, for tests that
 * inject a driver failure (nothing on a real host sets them):
 *   FAKE_CUDA_INIT_RESULT      CUresult of cuInit (default 0)
 *   FAKE_CUDA_MAJOR            compute capability major
 *   FAKE_CUDA_MINOR            compute capability minor
 *   FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion
 *   FAKE_CUDA_INIT_SLEEP_MS    milliseconds cuInit sleeps first, like a real
 *                              GPU initialisation (default 0)
 *
 * Error codes are CUDA's (cuda.h, CUresult); the attributes are
 * CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (75) and _MINOR (76):
 * https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef JB_CC_MAJOR
#define JB_CC_MAJOR 8
#endif
#ifndef JB_CC_MINOR
#define JB_CC_MINOR 7
#endif
#ifndef JB_DRIVER_VERSION
#define JB_DRIVER_VERSION 12060
#endif
#ifndef JB_DEVICE_NAME
#define JB_DEVICE_NAME "Orin"
#endif

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
};

#define EXPORT __attribute__((visibility("default")))

#ifdef JB_STUB
/* CUDA's stub: loads, links, and refuses every call. */
EXPORT int cuInit(unsigned int flags) { (void)flags; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuDriverGetVersion(int *version) { (void)version; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuDeviceGet(int *device, int ordinal) { (void)device; (void)ordinal; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuDeviceGetCount(int *count) { (void)count; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuDeviceGetName(char *name, int len, int device) { (void)name; (void)len; (void)device; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuDeviceGetAttribute(int *value, int attrib, int device) { (void)value; (void)attrib; (void)device; return CUDA_ERROR_STUB_LIBRARY; }
EXPORT int cuGetErrorName(int error, const char **name) { (void)error; (void)name; return CUDA_ERROR_STUB_LIBRARY; }
#else

static int env_int(const char *name, int def) {
	const char *v = getenv(name);
	return (v && *v) ? atoi(v) : def;
}

/* initialized is set by a successful cuInit: the device calls need it, as the driver's do. */
static int initialized;

EXPORT int cuInit(unsigned int flags) {
	if (flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	int ms = env_int("FAKE_CUDA_INIT_SLEEP_MS", 0);
	if (ms > 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		nanosleep(&ts, 0);
	}
	int rc = env_int("FAKE_CUDA_INIT_RESULT", CUDA_SUCCESS);
	initialized = rc == CUDA_SUCCESS;
	return rc;
}

EXPORT int cuDeviceGetCount(int *count) {
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = 1;
	return CUDA_SUCCESS;
}

EXPORT int cuDeviceGet(int *device, int ordinal) {
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = ordinal;
	return CUDA_SUCCESS;
}

EXPORT int cuDeviceGetName(char *name, int len, int device) {
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	strncpy(name, JB_DEVICE_NAME, (size_t)len - 1);
	name[len - 1] = 0;
	return CUDA_SUCCESS;
}

EXPORT int cuDeviceGetAttribute(int *value, int attrib, int device) {
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attrib) {
	case 75: *value = env_int("FAKE_CUDA_MAJOR", JB_CC_MAJOR); return CUDA_SUCCESS;
	case 76: *value = env_int("FAKE_CUDA_MINOR", JB_CC_MINOR); return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

#ifndef OMIT_DRIVER_VERSION
/* Needs no cuInit, as the driver's. */
EXPORT int cuDriverGetVersion(int *version) {
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = env_int("FAKE_CUDA_DRIVER_VERSION", JB_DRIVER_VERSION);
	return CUDA_SUCCESS;
}
#endif

/* Names only CUDA_ERROR_NO_DEVICE, so that the probe's own table is used otherwise. */
EXPORT int cuGetErrorName(int error, const char **name) {
	if (error == CUDA_ERROR_NO_DEVICE) {
		*name = "CUDA_ERROR_NO_DEVICE";
		return CUDA_SUCCESS;
	}
	*name = 0;
	return CUDA_ERROR_INVALID_VALUE;
}
#endif
