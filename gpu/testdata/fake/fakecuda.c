// fakecuda.c: a stand-in for libcuda.so.1 over host memory, for gotrain's
// tests without a GPU (package gpu, issue 13). It implements the driver
// calls package gpu binds, by their versioned names:
//   - device memory is malloc'ed host memory, filled with 0xff bytes (NaN)
//     so that a kernel reading what was never written shows it;
//   - streams are synchronous: every call completes before it returns;
//   - a "PTX" image is the marker text the fake NVRTC writes, naming a
//     shared object compiled from the kernel source by the host compiler.
//
// Environment:
//   GOTRAIN_FAKE_CUDA_DEVICES  number of devices (default 2)
//   GOTRAIN_FAKE_CUDA_FAIL_ALLOC=N  the N-th cuMemAlloc_v2 counted from
//       when the variable took its value fails with CUDA_ERROR_OUT_OF_MEMORY
//       (a suffix such as "@3" after N is ignored but makes the value new)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_FILE_NOT_FOUND = 301,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
};

#define MAX_DEVICES 64
#define MAX_PARAMS 16

struct ctx { int dev; int refs; };
static struct ctx ctxs[MAX_DEVICES];
static __thread struct ctx *current;
static int initialized;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int ndevices(void) {
	const char *s = getenv("GOTRAIN_FAKE_CUDA_DEVICES");
	int n = s && *s ? atoi(s) : 2;
	if (n < 0) n = 0;
	if (n > MAX_DEVICES) n = MAX_DEVICES;
	return n;
}

CUresult cuInit(unsigned int flags) {
	if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
	initialized = 1;
	return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

static const struct { CUresult code; const char *name, *msg; } errs[] = {
	{CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
	{CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
	{CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
};

CUresult cuGetErrorName(CUresult e, const char **s) {
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == e) { *s = errs[i].name; return CUDA_SUCCESS; }
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++)
		if (errs[i].code == e) { *s = errs[i].msg; return CUDA_SUCCESS; }
	*s = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

#define NEED_INIT() do { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define NEED_DEV(d) do { if ((d) < 0 || (d) >= ndevices()) return CUDA_ERROR_INVALID_DEVICE; } while (0)
#define NEED_CTX() do { if (!current) return CUDA_ERROR_INVALID_CONTEXT; } while (0)

CUresult cuDeviceGetCount(int *n) { NEED_INIT(); *n = ndevices(); return CUDA_SUCCESS; }

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	NEED_INIT();
	NEED_DEV(ordinal);
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	NEED_INIT();
	NEED_DEV(d);
	snprintf(name, len, "Fake CUDA Device %d", d);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	NEED_INIT();
	NEED_DEV(d);
	switch (attr) {
	case 16: *v = 4; break;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	case 75: *v = 9; break;  // COMPUTE_CAPABILITY_MAJOR
	case 76: *v = 0; break;  // COMPUTE_CAPABILITY_MINOR
	case 1: *v = 1024; break;  // MAX_THREADS_PER_BLOCK
	default: *v = 0;
	}
	return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
	NEED_INIT();
	NEED_DEV(d);
	*b = (size_t)16 << 30;
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(struct ctx **c, CUdevice d) {
	NEED_INIT();
	NEED_DEV(d);
	pthread_mutex_lock(&mu);
	ctxs[d].dev = d;
	ctxs[d].refs++;
	pthread_mutex_unlock(&mu);
	*c = &ctxs[d];
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	NEED_INIT();
	NEED_DEV(d);
	pthread_mutex_lock(&mu);
	int ok = ctxs[d].refs > 0;
	if (ok) ctxs[d].refs--;
	pthread_mutex_unlock(&mu);
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxSetCurrent(struct ctx *c) { NEED_INIT(); current = c; return CUDA_SUCCESS; }
CUresult cuCtxGetCurrent(struct ctx **c) { NEED_INIT(); *c = current; return CUDA_SUCCESS; }
CUresult cuCtxSynchronize(void) { NEED_INIT(); NEED_CTX(); return CUDA_SUCCESS; }

CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
	NEED_INIT();
	NEED_CTX();
	*free = *total = (size_t)16 << 30;
	return CUDA_SUCCESS;
}

// failAlloc reports whether this allocation is the one to fail.
static int failAlloc(void) {
	static char seen[32];
	static long count;
	const char *s = getenv("GOTRAIN_FAKE_CUDA_FAIL_ALLOC");
	if (!s) s = "";
	pthread_mutex_lock(&mu);
	if (strncmp(seen, s, sizeof seen - 1) != 0) {
		snprintf(seen, sizeof seen, "%s", s);
		count = 0;
	}
	long n = atol(s);
	int fail = n > 0 && ++count == n;
	pthread_mutex_unlock(&mu);
	return fail;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	NEED_INIT();
	NEED_CTX();
	if (n == 0) return CUDA_ERROR_INVALID_VALUE;
	if (failAlloc()) return CUDA_ERROR_OUT_OF_MEMORY;
	void *m = malloc(n);
	if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
	memset(m, 0xff, n);
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
	NEED_INIT();
	NEED_CTX();
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *s) {
	NEED_INIT();
	NEED_CTX();
	memmove((void *)(uintptr_t)dst, src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *s) {
	NEED_INIT();
	NEED_CTX();
	memmove(dst, (void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s) {
	NEED_INIT();
	NEED_CTX();
	memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, void *s) {
	NEED_INIT();
	NEED_CTX();
	unsigned int *p = (unsigned int *)(uintptr_t)dst;
	for (size_t i = 0; i < n; i++) p[i] = v;
	return CUDA_SUCCESS;
}

struct stream { int dev; };

CUresult cuStreamCreate(struct stream **s, unsigned int flags) {
	NEED_INIT();
	NEED_CTX();
	*s = malloc(sizeof **s);
	(*s)->dev = current->dev;
	return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(struct stream *s) { NEED_INIT(); return CUDA_SUCCESS; }

CUresult cuStreamDestroy_v2(struct stream *s) {
	NEED_INIT();
	free(s);
	return CUDA_SUCCESS;
}

// A module is a shared object from the fake NVRTC; the image is its marker:
//   //GOTRAIN-FAKE-PTX
//   .so PATH
//   .kernel NAME NPARAMS   (one line a kernel)
struct module;
struct function { struct module *m; void *fn; int nparams; char name[128]; };
struct module {
	void *so;
	void (*set_index)(const unsigned int *);
	int nkernels;
	struct function kernels[64];
};

static const char marker[] = "//GOTRAIN-FAKE-PTX\n";

CUresult cuModuleLoadData(struct module **out, const void *image) {
	NEED_INIT();
	NEED_CTX();
	const char *s = image;
	if (strncmp(s, marker, sizeof marker - 1) != 0) return CUDA_ERROR_INVALID_IMAGE;
	s += sizeof marker - 1;
	struct module *m = calloc(1, sizeof *m);
	char path[4096] = "";
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char line[4096];
		if (len >= sizeof line) { free(m); return CUDA_ERROR_INVALID_IMAGE; }
		memcpy(line, s, len);
		line[len] = 0;
		if (strncmp(line, ".so ", 4) == 0) {
			snprintf(path, sizeof path, "%s", line + 4);
		} else if (strncmp(line, ".kernel ", 8) == 0 && m->nkernels < 64) {
			struct function *k = &m->kernels[m->nkernels];
			k->m = m;
			if (sscanf(line + 8, "%127s %d", k->name, &k->nparams) == 2) m->nkernels++;
		}
		s += len;
		if (*s == '\n') s++;
	}
	m->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!m->so) {
		fprintf(stderr, "fakecuda: cuModuleLoadData: %s\n", dlerror());
		free(m);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	m->set_index = (void (*)(const unsigned int *))dlsym(m->so, "gotrain_fake_set_index");
	if (!m->set_index) {
		dlclose(m->so);
		free(m);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	*out = m;
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(struct module *m) {
	NEED_INIT();
	if (!m) return CUDA_ERROR_INVALID_HANDLE;
	dlclose(m->so);
	free(m);
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(struct function **out, struct module *m, const char *name) {
	NEED_INIT();
	NEED_CTX();
	for (int i = 0; i < m->nkernels; i++) {
		if (strcmp(m->kernels[i].name, name) != 0) continue;
		struct function *f = &m->kernels[i];
		if (!f->fn) f->fn = dlsym(m->so, name);
		if (!f->fn) return CUDA_ERROR_NOT_FOUND;
		*out = f;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

// kernel16 is every kernel's type here. Under the package's convention a
// kernel's parameters are pointers and long long, all of the INTEGER class
// in the x86-64 System V ABI: the first six travel in registers and the
// rest on the stack in order, and the caller pops them, so calling a kernel
// of fewer parameters with 16 passes its own in the right places and the
// others are ignored. (Not valid for float or struct parameters, nor
// guaranteed on other ABIs.)
typedef void (*kernel16)(long long, long long, long long, long long, long long, long long, long long, long long,
	long long, long long, long long, long long, long long, long long, long long, long long);

CUresult cuLaunchKernel(struct function *f, unsigned int gx, unsigned int gy, unsigned int gz,
	unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, void *stream,
	void **params, void **extra) {
	NEED_INIT();
	NEED_CTX();
	if (!f) return CUDA_ERROR_INVALID_HANDLE;
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return CUDA_ERROR_INVALID_VALUE;
	if ((unsigned long long)bx * by * bz > 1024) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	if (shared != 0 || extra != NULL || f->nparams > MAX_PARAMS) return CUDA_ERROR_INVALID_VALUE;
	long long a[MAX_PARAMS] = {0};
	for (int i = 0; i < f->nparams; i++) memcpy(&a[i], params[i], sizeof a[i]);
	kernel16 k = (kernel16)f->fn;
	unsigned int idx[12] = {0, 0, 0, 0, 0, 0, bx, by, bz, gx, gy, gz};
	for (unsigned int z = 0; z < gz; z++)
	for (unsigned int y = 0; y < gy; y++)
	for (unsigned int x = 0; x < gx; x++)
	for (unsigned int tz = 0; tz < bz; tz++)
	for (unsigned int ty = 0; ty < by; ty++)
	for (unsigned int tx = 0; tx < bx; tx++) {
		idx[0] = tx; idx[1] = ty; idx[2] = tz;
		idx[3] = x; idx[4] = y; idx[5] = z;
		f->m->set_index(idx);
		k(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
	}
	return CUDA_SUCCESS;
}
