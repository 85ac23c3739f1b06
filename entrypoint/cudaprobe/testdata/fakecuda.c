/*
 * A stand-in for libcuda.so.1 exporting the driver API calls that
 * jetbake-cudaprobe makes. Its answers come from environment variables:
 *   FAKE_CUDA_INIT_RESULT      CUresult of cuInit (default 0)
 *   FAKE_CUDA_MAJOR            compute capability major (default 8)
 *   FAKE_CUDA_MINOR            compute capability minor (default 7)
 *   FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion (default 12060)
 *   FAKE_CUDA_INIT_SLEEP_MS    milliseconds cuInit sleeps first, like a real
 *                              GPU initialisation (default 0)
 * Build: gcc -shared -fPIC -o libcuda.so.1 fakecuda.c
 * With -DOMIT_DRIVER_VERSION it lacks cuDriverGetVersion.
 */
#include <stdlib.h>
#include <time.h>

static int env_int(const char *name, int def) {
	const char *v = getenv(name);
	return (v && *v) ? atoi(v) : def;
}

int cuInit(unsigned int flags) {
	(void)flags;
	int ms = env_int("FAKE_CUDA_INIT_SLEEP_MS", 0);
	if (ms > 0) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		nanosleep(&ts, 0);
	}
	return env_int("FAKE_CUDA_INIT_RESULT", 0);
}

int cuDeviceGet(int *device, int ordinal) {
	*device = ordinal;
	return 0;
}

int cuDeviceGetAttribute(int *value, int attrib, int device) {
	(void)device;
	switch (attrib) {
	case 75: *value = env_int("FAKE_CUDA_MAJOR", 8); return 0;
	case 76: *value = env_int("FAKE_CUDA_MINOR", 7); return 0;
	}
	return 1; /* CUDA_ERROR_INVALID_VALUE */
}

#ifndef OMIT_DRIVER_VERSION
int cuDriverGetVersion(int *version) {
	*version = env_int("FAKE_CUDA_DRIVER_VERSION", 12060);
	return 0;
}
#endif

/* Names only CUDA_ERROR_NO_DEVICE, so that the probe's own table is used otherwise. */
int cuGetErrorName(int error, const char **name) {
	if (error == 100) {
		*name = "CUDA_ERROR_NO_DEVICE";
		return 0;
	}
	*name = 0;
	return 1;
}
