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
 *   -DJB_MEM_BYTES=1073741824         device memory cuMemAlloc_v2 hands out
 * With -DJB_STUB it is CUDA's link-time stub instead (stubs/libcuda.so in the
 * CUDA devel images, soname libcuda.so.1): every call fails with
 * CUDA_ERROR_STUB_LIBRARY (34), so a program that links libcuda loads, and a
 * program that asks the GPU anything learns that there is no driver.
 * With -DOMIT_DRIVER_VERSION it lacks cuDriverGetVersion (not a driver).
 *
 * Besides the device queries it runs one kernel as the driver does: the
 * primary context (retained, made current per thread, released), modules
 * loaded from PTX text that it "JIT-compiles" for the GPU's own SM, device
 * memory, launches on the default stream and synchronisation. Only the _v2
 * symbols that cuda.h maps cuMemAlloc, cuMemFree, cuMemcpyHtoD, cuMemcpyDtoH
 * and cuDevicePrimaryCtxRelease to are exported for memory (the unversioned
 * ones of the real driver take 32-bit device pointers). Its JIT reads the
 * PTX as ptxas would as far as the header, the entry's parameters and the
 * registers go: a .version newer than the driver's PTX ISA is
 * CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); a .target above the GPU's SM,
 * an undeclared register or parameter, or text that is not PTX is
 * CUDA_ERROR_INVALID_PTX (218), with ptxas's sentence in the JIT error log
 * (cuModuleLoadDataEx's CU_JIT_ERROR_LOG_BUFFER). It runs only jetbake's
 * kernel, jetbake_axpb (y[i] = a*x[i] + b for i < n, see
 * entrypoint/cudaprobe/ptx.go), computed on the CPU; any other PTX is
 * refused as invalid. Kernel faults are asynchronous as on a GPU: the launch
 * succeeds, cuCtxSynchronize reports the error, and it sticks to the context
 * (every later call on it returns it) until the primary context is released.
 *
 * Environment variables override the compiled-in answers, for tests that
 * inject a driver failure (nothing on a real host sets them):
 *   FAKE_CUDA_INIT_RESULT      CUresult of cuInit (default 0)
 *   FAKE_CUDA_MAJOR            compute capability major
 *   FAKE_CUDA_MINOR            compute capability minor
 *   FAKE_CUDA_DRIVER_VERSION   cuDriverGetVersion
 *   FAKE_CUDA_INIT_SLEEP_MS    milliseconds cuInit sleeps first, like a real
 *                              GPU initialisation (default 0)
 *   FAKE_CUDA_MEM_BYTES        device memory: a larger allocation is
 *                              CUDA_ERROR_OUT_OF_MEMORY (2)
 *   FAKE_CUDA_JIT_RESULT       CUresult of cuModuleLoadData(Ex), a JIT
 *                              failure such as 218 or 209 (default 0)
 *   FAKE_CUDA_LAUNCH_RESULT    a kernel fault such as 719
 *                              (CUDA_ERROR_LAUNCH_FAILED), reported by
 *                              cuCtxSynchronize; 1 and 701 are refused by
 *                              cuLaunchKernel itself, as the driver does
 *   FAKE_CUDA_KERNEL_OUTPUT    wrong, nan or inf: the kernel's value at
 *                              n/2 is off by one, NaN or +Inf
 *
 * Error codes are CUDA's (cuda.h, CUresult); the attributes are
 * CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR (75) and _MINOR (76); the JIT
 * options CU_JIT_ERROR_LOG_BUFFER (5) and _SIZE_BYTES (6):
 * https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html
 * The PTX ISA of each CUDA release:
 * https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
#ifndef JB_MEM_BYTES
#define JB_MEM_BYTES 1073741824ULL
#endif

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_STUB_LIBRARY = 34,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_PTX = 218,
	CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_ILLEGAL_ADDRESS = 700,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
	CUDA_ERROR_MISALIGNED_ADDRESS = 716,
};

/* CUdeviceptr is 64 bits, as in cuda.h on 64-bit systems. */
typedef unsigned long long CUdeviceptr;

#define EXPORT __attribute__((visibility("default")))

#ifdef JB_STUB
/* CUDA's stub: loads, links, and refuses every call. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define STUB(name, params) EXPORT int name params { return CUDA_ERROR_STUB_LIBRARY; }
STUB(cuInit, (unsigned int flags))
STUB(cuDriverGetVersion, (int *version))
STUB(cuDeviceGet, (int *device, int ordinal))
STUB(cuDeviceGetCount, (int *count))
STUB(cuDeviceGetName, (char *name, int len, int device))
STUB(cuDeviceGetAttribute, (int *value, int attrib, int device))
STUB(cuGetErrorName, (int error, const char **name))
STUB(cuDevicePrimaryCtxRetain, (void **pctx, int device))
STUB(cuDevicePrimaryCtxRelease, (int device))
STUB(cuDevicePrimaryCtxRelease_v2, (int device))
STUB(cuCtxSetCurrent, (void *ctx))
STUB(cuCtxGetCurrent, (void **pctx))
STUB(cuCtxSynchronize, (void))
STUB(cuModuleLoadData, (void **module, const void *image))
STUB(cuModuleLoadDataEx, (void **module, const void *image, unsigned int n, int *options, void **values))
STUB(cuModuleGetFunction, (void **hfunc, void *hmod, const char *name))
STUB(cuModuleUnload, (void *hmod))
STUB(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize))
STUB(cuMemFree_v2, (CUdeviceptr dptr))
STUB(cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t n))
STUB(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t n))
STUB(cuLaunchKernel, (void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
		      unsigned int bz, unsigned int shared, void *stream, void **params, void **extra))
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

/* driver_version is what cuDriverGetVersion reports. */
static int driver_version(void) {
	return env_int("FAKE_CUDA_DRIVER_VERSION", JB_DRIVER_VERSION);
}

#ifndef OMIT_DRIVER_VERSION
/* Needs no cuInit, as the driver's. */
EXPORT int cuDriverGetVersion(int *version) {
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = driver_version();
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

/* ---- The primary context, current per thread as the driver's is. ---- */

struct context {
	int refs;   /* retains; 0 is inactive */
	int sticky; /* a kernel fault, returned by every call until the release */
};
static struct context primary;
static __thread struct context *current;

/* ctx_check is what every call on the current context checks first. */
static int ctx_check(void) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!current || current->refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return current->sticky;
}

/* ---- Device memory: host memory behind addresses the host cannot use. ---- */

#define MAX_ALLOCS 16
struct alloc {
	CUdeviceptr base;
	size_t size;
	unsigned char *host;
};
static struct alloc allocs[MAX_ALLOCS];
static CUdeviceptr next_base = 0x7f5a00000000ULL;
static unsigned long long mem_used;

/* device_bytes is the host copy of n bytes at p, or 0 when they are not all inside one allocation. */
static unsigned char *device_bytes(CUdeviceptr p, size_t n) {
	for (int i = 0; i < MAX_ALLOCS; i++) {
		struct alloc *a = &allocs[i];
		if (a->host && p >= a->base && n <= a->size && p - a->base <= a->size - n)
			return a->host + (p - a->base);
	}
	return 0;
}

EXPORT int cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
	int rc = ctx_check();
	if (rc)
		return rc;
	if (!dptr || bytesize == 0)
		return CUDA_ERROR_INVALID_VALUE;
	const char *v = getenv("FAKE_CUDA_MEM_BYTES");
	unsigned long long total = (v && *v) ? strtoull(v, 0, 10) : JB_MEM_BYTES;
	if (mem_used > total || bytesize > total - mem_used)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (int i = 0; i < MAX_ALLOCS; i++) {
		struct alloc *a = &allocs[i];
		if (a->host)
			continue;
		if (!(a->host = malloc(bytesize)))
			return CUDA_ERROR_OUT_OF_MEMORY;
		memset(a->host, 0xa5, bytesize); /* device memory starts as whatever was there */
		a->base = next_base, a->size = bytesize;
		next_base += (bytesize + 0xffffULL) & ~0xffffULL;
		mem_used += bytesize;
		*dptr = a->base;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

static void free_alloc(struct alloc *a) {
	free(a->host);
	mem_used -= a->size;
	memset(a, 0, sizeof *a);
}

EXPORT int cuMemFree_v2(CUdeviceptr dptr) {
	int rc = ctx_check();
	if (rc)
		return rc;
	for (int i = 0; i < MAX_ALLOCS; i++) {
		if (allocs[i].host && allocs[i].base == dptr) {
			free_alloc(&allocs[i]);
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

EXPORT int cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	int rc = ctx_check();
	if (rc)
		return rc;
	unsigned char *d = device_bytes(dst, n);
	if (!d || (!src && n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(d, src, n);
	return CUDA_SUCCESS;
}

EXPORT int cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	int rc = ctx_check();
	if (rc)
		return rc;
	unsigned char *s = device_bytes(src, n);
	if (!s || (!dst && n))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(dst, s, n);
	return CUDA_SUCCESS;
}

/* ---- Modules: one kernel each, jetbake_axpb. ---- */

#define KERNEL_NAME "jetbake_axpb"
#define MAX_MODULES 4
struct function {
	int magic;
};
struct module {
	int used;
	int visible; /* .visible: cuModuleGetFunction finds the entry */
	struct function fn;
};
static struct module modules[MAX_MODULES];

static struct module *module_of(void *h) {
	for (int i = 0; i < MAX_MODULES; i++)
		if (h == (void *)&modules[i] && modules[i].used)
			return &modules[i];
	return 0;
}

static struct module *module_of_function(void *f) {
	for (int i = 0; i < MAX_MODULES; i++)
		if (f == (void *)&modules[i].fn && modules[i].used)
			return &modules[i];
	return 0;
}

EXPORT int cuDevicePrimaryCtxRetain(void **pctx, int device) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (primary.refs++ == 0)
		primary.sticky = 0;
	*pctx = &primary;
	return CUDA_SUCCESS;
}

/* release drops a retain; the last one destroys what the context holds. */
static int release(int device) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (device != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (primary.refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--primary.refs > 0)
		return CUDA_SUCCESS;
	for (int i = 0; i < MAX_ALLOCS; i++)
		if (allocs[i].host)
			free_alloc(&allocs[i]);
	memset(modules, 0, sizeof modules);
	primary.sticky = 0;
	return CUDA_SUCCESS;
}

EXPORT int cuDevicePrimaryCtxRelease_v2(int device) { return release(device); }
EXPORT int cuDevicePrimaryCtxRelease(int device) { return release(device); }

EXPORT int cuCtxSetCurrent(void *ctx) {
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ctx && (ctx != (void *)&primary || primary.refs == 0))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = ctx;
	return CUDA_SUCCESS;
}

EXPORT int cuCtxGetCurrent(void **pctx) {
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	*pctx = current;
	return CUDA_SUCCESS;
}

/* The default stream has run every launch by the time it returns: only a fault is left to report. */
EXPORT int cuCtxSynchronize(void) { return ctx_check(); }

/* ---- The JIT: reads the PTX as ptxas would, as far as this kernel needs. ---- */

struct jit_log {
	char *buf;
	size_t size, used;
};

static int jit_fail(struct jit_log *log, int code, const char *fmt, ...) {
	if (log->buf && log->size > log->used + 1) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(log->buf + log->used, log->size - log->used, fmt, ap);
		va_end(ap);
		if (n > 0)
			log->used += (size_t)n < log->size - log->used ? (size_t)n : log->size - log->used - 1;
	}
	return code;
}

struct lexer {
	const char *p;
	int line;
	char tok[64];
};

static int ident_char(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       c == '$' || c == '%';
}

/* next reads the next token (a word or one punctuation character) past
 * spaces and comments; it returns 0 at the end of the text or on a word of
 * 64 characters or more. */
static int next(struct lexer *lx) {
	for (;;) {
		while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\r' || *lx->p == '\n')
			lx->line += *lx->p++ == '\n';
		if (lx->p[0] == '/' && lx->p[1] == '/') {
			while (*lx->p && *lx->p != '\n')
				lx->p++;
		} else if (lx->p[0] == '/' && lx->p[1] == '*') {
			for (lx->p += 2; *lx->p && !(lx->p[0] == '*' && lx->p[1] == '/'); lx->p++)
				lx->line += *lx->p == '\n';
			if (*lx->p)
				lx->p += 2;
		} else {
			break;
		}
	}
	size_t n = 0;
	lx->tok[0] = 0;
	if (!*lx->p)
		return 0;
	if (!ident_char(*lx->p)) {
		lx->tok[n++] = *lx->p++;
	} else {
		while (ident_char(*lx->p) && n < sizeof lx->tok - 1)
			lx->tok[n++] = *lx->p++;
		if (ident_char(*lx->p)) {
			lx->tok[0] = 0;
			return 0;
		}
	}
	lx->tok[n] = 0;
	return 1;
}

static int is(const struct lexer *lx, const char *s) { return strcmp(lx->tok, s) == 0; }

/* PTX_ERROR logs ptxas's line prefix and the message, and is CUDA_ERROR_INVALID_PTX. */
#define PTX_ERROR(lx, log, ...)                                                                           \
	(jit_fail(log, CUDA_ERROR_INVALID_PTX, "ptxas application ptx input, line %d; error   : ", (lx)->line), \
	 jit_fail(log, CUDA_ERROR_INVALID_PTX, __VA_ARGS__))

/* max_ptx_isa is the newest PTX ISA (10*major + minor) a driver of CUDA version v reads. */
static int max_ptx_isa(int v) {
	int major = v / 1000, minor = v % 1000 / 10;
	if (major >= 13)
		return 90 + minor;
	if (major == 12)
		return minor <= 5 ? 80 + minor : 79 + minor; /* 12.6 still reads 8.5; 12.7 reads 8.6 */
	if (major == 11)
		return 70 + minor;
	if (major == 10)
		return 63 + minor;
	return 60 + (major == 9 ? minor : 0);
}

/* header reads .version, .target and .address_size against the driver and the GPU. */
static int header(struct lexer *lx, struct jit_log *log) {
	int vmajor, vminor, target;
	char suffix = 0;
	if (!next(lx) || !is(lx, ".version") || !next(lx) || sscanf(lx->tok, "%d.%d", &vmajor, &vminor) != 2)
		return PTX_ERROR(lx, log, "Missing .version directive at start of file");
	int isa = max_ptx_isa(driver_version());
	if (vmajor * 10 + vminor > isa)
		return jit_fail(log, CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
				"ptxas application ptx input, line %d; fatal   : Unsupported .version %d.%d; current version is '%d.%d'",
				lx->line, vmajor, vminor, isa / 10, isa % 10);
	if (!next(lx) || !is(lx, ".target") || !next(lx) || sscanf(lx->tok, "sm_%d%c", &target, &suffix) < 1)
		return PTX_ERROR(lx, log, "Missing .target directive");
	int sm = 10 * env_int("FAKE_CUDA_MAJOR", JB_CC_MAJOR) + env_int("FAKE_CUDA_MINOR", JB_CC_MINOR);
	if (target > sm || (suffix == 'a' && target != sm) || (suffix == 'f' && target / 10 != sm / 10))
		return jit_fail(log, CUDA_ERROR_INVALID_PTX,
				"ptxas fatal   : SM version specified by .target is higher than default SM version assumed");
	while (next(lx) && !is(lx, ".address_size")) /* target options such as texmode_independent */
		;
	if (!is(lx, ".address_size") || !next(lx) || !is(lx, "64"))
		return PTX_ERROR(lx, log, "a 64-bit driver needs .address_size 64");
	return CUDA_SUCCESS;
}

/* The entry's parameters the kernel takes, in order: y, x, a, b, n. */
static const char *const param_types[] = {".u64", ".u64", ".f32", ".f32", ".u32"};
#define NPARAMS (sizeof param_types / sizeof param_types[0])

struct reg {
	char name[32];
	int count; /* %name<count> declares %name0 .. %name(count-1); -1 declares %name alone */
};

struct body {
	char params[NPARAMS][64];
	struct reg regs[16];
	int nregs;
	int ld_global, fma, st_global, ret;
};

/* entry reads ".visible .entry jetbake_axpb(.param .u64 y, ...)" up to its "{". */
static int entry(struct lexer *lx, struct body *b, int *visible, struct jit_log *log) {
	if (!next(lx))
		return PTX_ERROR(lx, log, "no kernel in the module");
	if ((*visible = is(lx, ".visible")) && !next(lx))
		return PTX_ERROR(lx, log, "syntax error");
	if (!is(lx, ".entry") || !next(lx) || !is(lx, KERNEL_NAME))
		return PTX_ERROR(lx, log, "stand-in libcuda: the module's first entry is not " KERNEL_NAME ", the only kernel it runs");
	if (!next(lx) || !is(lx, "("))
		return PTX_ERROR(lx, log, "syntax error at '%s'", lx->tok);
	for (size_t i = 0; i < NPARAMS; i++) {
		if (!next(lx) || !is(lx, ".param") || !next(lx) || !is(lx, param_types[i]))
			return PTX_ERROR(lx, log, "stand-in libcuda: parameter %d of " KERNEL_NAME " is not %s", (int)i, param_types[i]);
		while (next(lx) && (lx->tok[0] == '.' || (lx->tok[0] >= '0' && lx->tok[0] <= '9'))) /* .ptr .align 4 */
			;
		snprintf(b->params[i], sizeof b->params[i], "%s", lx->tok);
		if (!next(lx) || !is(lx, i + 1 < NPARAMS ? "," : ")"))
			return PTX_ERROR(lx, log, "stand-in libcuda: " KERNEL_NAME " takes (y, x, a, b, n)");
	}
	while (next(lx) && !is(lx, "{")) /* performance directives such as .maxntid */
		;
	return is(lx, "{") ? CUDA_SUCCESS : PTX_ERROR(lx, log, "syntax error: no body");
}

/* declare reads ".reg .b32 %r<6>, %x;" after its ".reg". */
static int declare(struct lexer *lx, struct body *b, struct jit_log *log) {
	while (next(lx) && lx->tok[0] == '.') /* the type */
		;
	for (;;) {
		if (lx->tok[0] != '%' || b->nregs == (int)(sizeof b->regs / sizeof b->regs[0]))
			return PTX_ERROR(lx, log, "syntax error at '%s'", lx->tok);
		struct reg *r = &b->regs[b->nregs++];
		snprintf(r->name, sizeof r->name, "%s", lx->tok + 1);
		r->count = -1;
		if (!next(lx))
			return PTX_ERROR(lx, log, "syntax error: unexpected end of file");
		if (is(lx, "<")) {
			if (!next(lx) || (r->count = atoi(lx->tok)) <= 0 || !next(lx) || !is(lx, ">") || !next(lx))
				return PTX_ERROR(lx, log, "syntax error in the declaration of %%%s", r->name);
		}
		if (is(lx, ";"))
			return CUDA_SUCCESS;
		if (!is(lx, ",") || !next(lx))
			return PTX_ERROR(lx, log, "syntax error at '%s'", lx->tok);
	}
}

static int declared(const struct body *b, const char *tok) {
	static const char *const special[] = {"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "clock", "clock64"};
	char name[64];
	size_t len = strcspn(tok + 1, ".");
	snprintf(name, sizeof name, "%.*s", (int)len, tok + 1);
	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
		if (strcmp(name, special[i]) == 0)
			return 1;
	size_t digits = len;
	while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9')
		digits--;
	for (int i = 0; i < b->nregs; i++) {
		const struct reg *r = &b->regs[i];
		if (r->count < 0 ? strcmp(r->name, name) == 0
				 : digits < len && strlen(r->name) == digits && strncmp(r->name, name, digits) == 0 &&
					   atoi(name + digits) < r->count)
			return 1;
	}
	return 0;
}

static int is_param(const struct body *b, const char *name) {
	for (size_t i = 0; i < NPARAMS; i++)
		if (strcmp(b->params[i], name) == 0)
			return 1;
	return 0;
}

/* statement reads one instruction or label, its first word in lx->tok. */
static int statement(struct lexer *lx, struct body *b, struct jit_log *log) {
	char op[64];
	int guard = is(lx, "@");
	if (guard && (!next(lx) || (is(lx, "!") && !next(lx)) || !declared(b, lx->tok) || !next(lx)))
		return PTX_ERROR(lx, log, "Unknown symbol '%s'", lx->tok);
	snprintf(op, sizeof op, "%s", lx->tok);
	if (!next(lx))
		return PTX_ERROR(lx, log, "syntax error: unexpected end of file");
	if (!guard && is(lx, ":"))
		return CUDA_SUCCESS; /* a label */
	b->ld_global |= strcmp(op, "ld.global.f32") == 0;
	b->fma |= strcmp(op, "fma.rn.f32") == 0;
	b->st_global |= strcmp(op, "st.global.f32") == 0;
	b->ret |= strcmp(op, "ret") == 0;
	int param_load = strncmp(op, "ld.param.", 9) == 0;
	while (!is(lx, ";")) {
		if (lx->tok[0] == '%' && !declared(b, lx->tok))
			return PTX_ERROR(lx, log, "Unknown symbol '%s'", lx->tok);
		if (param_load && is(lx, "[") && (!next(lx) || !is_param(b, lx->tok)))
			return PTX_ERROR(lx, log, "Unknown symbol '%s'", lx->tok);
		if (!next(lx) || is(lx, "}"))
			return PTX_ERROR(lx, log, "syntax error: missing ';' after %s", op);
	}
	return CUDA_SUCCESS;
}

/* jit compiles the PTX text for this GPU, as far as this stand-in can. */
static int jit(const char *ptx, struct module *m, struct jit_log *log) {
	struct lexer lx = {ptx, 1, ""};
	struct body b;
	memset(&b, 0, sizeof b);
	int rc = header(&lx, log);
	if (!rc)
		rc = entry(&lx, &b, &m->visible, log);
	while (!rc) {
		if (!next(&lx))
			return PTX_ERROR(&lx, log, "syntax error: unexpected end of file");
		if (is(&lx, "}"))
			break;
		rc = is(&lx, ".reg") ? declare(&lx, &b, log) : statement(&lx, &b, log);
	}
	if (rc)
		return rc;
	if (next(&lx))
		return PTX_ERROR(&lx, log, "stand-in libcuda: a module holds " KERNEL_NAME " alone");
	if (!b.ld_global || !b.fma || !b.st_global || !b.ret)
		return PTX_ERROR(&lx, log, "stand-in libcuda: " KERNEL_NAME " lacks ld.global.f32, fma.rn.f32, st.global.f32 or ret");
	return CUDA_SUCCESS;
}

static int load(void **module, const void *image, struct jit_log *log) {
	int rc = ctx_check();
	if (rc)
		return rc;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	int injected = env_int("FAKE_CUDA_JIT_RESULT", 0);
	if (injected)
		return jit_fail(log, injected, "stand-in libcuda: FAKE_CUDA_JIT_RESULT=%d", injected);
	for (int i = 0; i < MAX_MODULES; i++) {
		struct module *m = &modules[i];
		if (m->used)
			continue;
		memset(m, 0, sizeof *m);
		if ((rc = jit(image, m, log)))
			return rc;
		m->used = 1;
		*module = m;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT int cuModuleLoadData(void **module, const void *image) {
	struct jit_log log = {0, 0, 0};
	return load(module, image, &log);
}

/* Reads CU_JIT_ERROR_LOG_BUFFER (5) and its size (6), which it sets to the bytes written; ignores the other options. */
EXPORT int cuModuleLoadDataEx(void **module, const void *image, unsigned int n, int *options, void **values) {
	struct jit_log log = {0, 0, 0};
	int size_at = -1;
	if (n && (!options || !values))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < n; i++) {
		if (options[i] == 5)
			log.buf = values[i];
		else if (options[i] == 6)
			log.size = (unsigned int)(uintptr_t)values[i], size_at = (int)i;
	}
	if (log.buf && log.size)
		log.buf[0] = 0;
	int rc = load(module, image, &log);
	if (size_at >= 0)
		values[size_at] = (void *)(uintptr_t)log.used;
	return rc;
}

EXPORT int cuModuleGetFunction(void **hfunc, void *hmod, const char *name) {
	int rc = ctx_check();
	if (rc)
		return rc;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	struct module *m = module_of(hmod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!m->visible || strcmp(name, KERNEL_NAME) != 0)
		return CUDA_ERROR_NOT_FOUND;
	*hfunc = &m->fn;
	return CUDA_SUCCESS;
}

EXPORT int cuModuleUnload(void *hmod) {
	int rc = ctx_check();
	if (rc)
		return rc;
	struct module *m = module_of(hmod);
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	m->used = 0;
	return CUDA_SUCCESS;
}

/* ---- Launch: jetbake_axpb on the CPU. ---- */

/* axpb runs y[i] = a*x[i] + b for the launch's threads i < n; a fault sticks to the context. */
static void axpb(void **params, unsigned long long threads) {
	CUdeviceptr y = *(CUdeviceptr *)params[0], x = *(CUdeviceptr *)params[1];
	float a = *(float *)params[2], b = *(float *)params[3];
	unsigned int n = *(unsigned int *)params[4];
	unsigned long long count = n < threads ? n : threads;
	float *ys = (float *)(void *)device_bytes(y, count * sizeof(float));
	const float *xs = (const float *)(void *)device_bytes(x, count * sizeof(float));
	if (count && ((x | y) % sizeof(float))) {
		current->sticky = CUDA_ERROR_MISALIGNED_ADDRESS;
		return;
	}
	if (count && (!xs || !ys)) {
		current->sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
		return;
	}
	/* a*x is exact in double: one rounding to float, as fma.rn.f32 rounds once. */
	for (unsigned long long i = 0; i < count; i++)
		ys[i] = (float)((double)a * xs[i] + b);
	const char *out = getenv("FAKE_CUDA_KERNEL_OUTPUT");
	if (!count || !out)
		return;
	if (strcmp(out, "wrong") == 0)
		ys[count / 2] += 1.0f;
	else if (strcmp(out, "nan") == 0)
		ys[count / 2] = NAN;
	else if (strcmp(out, "inf") == 0)
		ys[count / 2] = INFINITY;
}

EXPORT int cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
			  unsigned int bz, unsigned int shared, void *stream, void **params, void **extra) {
	int rc = ctx_check();
	if (rc)
		return rc;
	if (!module_of_function(f) || stream)
		return CUDA_ERROR_INVALID_HANDLE; /* the stand-in has the default stream alone */
	if (!gx || !gy || !gz || gy > 65535 || gz > 65535 || !bx || !by || !bz || bz > 64 ||
	    (unsigned long long)bx * by * bz > 1024 || shared > 48 * 1024)
		return CUDA_ERROR_INVALID_VALUE;
	if (!params || extra)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < NPARAMS; i++)
		if (!params[i])
			return CUDA_ERROR_INVALID_VALUE;
	int injected = env_int("FAKE_CUDA_LAUNCH_RESULT", 0);
	if (injected == CUDA_ERROR_INVALID_VALUE || injected == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
		return injected;
	if (injected)
		current->sticky = injected;
	else
		axpb(params, (unsigned long long)gx * bx);
	return CUDA_SUCCESS;
}
#endif
