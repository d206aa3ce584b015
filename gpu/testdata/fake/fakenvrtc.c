// fakenvrtc.c: a stand-in for libnvrtc.so over the host C++ compiler, for
// gotrain's tests without a GPU (package gpu, issue 13).
//
// nvrtcCompileProgram writes the source (package gpu's Prelude and a
// kernel in its dialect) to a file, compiles it with
//   $CXX (default c++) -O2 -shared -fPIC -ffp-contract=off
// into a shared object, and returns as "PTX" a marker text naming that
// object and each kernel with its parameter count (found in the source as
// "KERNEL void name(...)"), which the fake cuModuleLoadData reads. The
// compiler's output is the program log. Objects go to
// $GOTRAIN_FAKE_NVRTC_DIR (default $TMPDIR or /tmp) and are reused when the
// same source compiles again.
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int nvrtcResult;
enum {
	NVRTC_SUCCESS = 0,
	NVRTC_ERROR_OUT_OF_MEMORY = 1,
	NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
	NVRTC_ERROR_INVALID_INPUT = 3,
	NVRTC_ERROR_INVALID_PROGRAM = 4,
	NVRTC_ERROR_INVALID_OPTION = 5,
	NVRTC_ERROR_COMPILATION = 6,
};

struct program {
	char *src, *name, *ptx, *log;
};

const char *nvrtcGetErrorString(nvrtcResult r) {
	switch (r) {
	case NVRTC_SUCCESS: return "NVRTC_SUCCESS";
	case NVRTC_ERROR_OUT_OF_MEMORY: return "NVRTC_ERROR_OUT_OF_MEMORY";
	case NVRTC_ERROR_PROGRAM_CREATION_FAILURE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
	case NVRTC_ERROR_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
	case NVRTC_ERROR_INVALID_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
	case NVRTC_ERROR_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
	case NVRTC_ERROR_COMPILATION: return "NVRTC_ERROR_COMPILATION";
	}
	return "NVRTC_ERROR unknown";
}

nvrtcResult nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return NVRTC_SUCCESS; }

static const int archs[] = {75, 80, 86, 89, 90};

nvrtcResult nvrtcGetNumSupportedArchs(int *n) { *n = sizeof archs / sizeof archs[0]; return NVRTC_SUCCESS; }
nvrtcResult nvrtcGetSupportedArchs(int *a) { memcpy(a, archs, sizeof archs); return NVRTC_SUCCESS; }

nvrtcResult nvrtcCreateProgram(struct program **out, const char *src, const char *name, int nheaders,
	const char *const *headers, const char *const *names) {
	if (!out || !src) return NVRTC_ERROR_INVALID_INPUT;
	if (nheaders != 0) return NVRTC_ERROR_INVALID_INPUT;  // not needed by package gpu
	struct program *p = calloc(1, sizeof *p);
	p->src = strdup(src);
	p->name = strdup(name ? name : "default_program");
	*out = p;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcDestroyProgram(struct program **p) {
	if (!p || !*p) return NVRTC_ERROR_INVALID_PROGRAM;
	free((*p)->src);
	free((*p)->name);
	free((*p)->ptx);
	free((*p)->log);
	free(*p);
	*p = NULL;
	return NVRTC_SUCCESS;
}

// validOption accepts the options real NVRTC takes that package gpu passes.
static int validOption(const char *o) {
	static const char *exact[] = {"-default-device", "--fmad=false", "--fmad=true", "-fmad=false",
		"-prec-div=true", "-prec-sqrt=true", "--prec-div=true", "--prec-sqrt=true", NULL};
	for (int i = 0; exact[i]; i++)
		if (strcmp(o, exact[i]) == 0) return 1;
	int arch;
	return sscanf(o, "--gpu-architecture=compute_%d", &arch) == 1 || sscanf(o, "-arch=compute_%d", &arch) == 1;
}

static uint64_t fnv(const char *s) {
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

// appendf appends to a malloc'ed string.
static void appendf(char **s, const char *fmt, ...) {
	size_t old = *s ? strlen(*s) : 0;
	va_list ap;
	va_start(ap, fmt);
	int add = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	*s = realloc(*s, old + add + 1);
	va_start(ap, fmt);
	vsnprintf(*s + old, add + 1, fmt, ap);
	va_end(ap);
}

// kernels appends a ".kernel NAME NPARAMS" line for each "KERNEL void
// name(params)" in src.
static void kernels(const char *src, char **out) {
	const char *key = "KERNEL void ";
	for (const char *s = strstr(src, key); s; s = strstr(s, key)) {
		s += strlen(key);
		while (isspace((unsigned char)*s)) s++;
		const char *name = s;
		while (isalnum((unsigned char)*s) || *s == '_') s++;
		char nm[128];
		size_t len = (size_t)(s - name);
		if (len == 0 || len >= sizeof nm) continue;
		memcpy(nm, name, len);
		nm[len] = 0;
		while (isspace((unsigned char)*s)) s++;
		if (*s != '(') continue;
		s++;
		long n = 0;
		int depth = 0, any = 0;
		for (; *s && !(depth == 0 && *s == ')'); s++) {
			if (*s == '(') depth++;
			else if (*s == ')') depth--;
			else if (*s == ',' && depth == 0) n++;
			else if (!isspace((unsigned char)*s)) any = 1;
		}
		if (any) n++;
		appendf(out, ".kernel %s %ld\n", nm, n);
	}
}

nvrtcResult nvrtcCompileProgram(struct program *p, int nopts, const char *const *opts) {
	if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
	for (int i = 0; i < nopts; i++) {
		if (!validOption(opts[i])) {
			free(p->log);
			p->log = NULL;
			appendf(&p->log, "nvrtc: error: unrecognized option %s\n", opts[i]);
			return NVRTC_ERROR_INVALID_OPTION;
		}
	}
	const char *dir = getenv("GOTRAIN_FAKE_NVRTC_DIR");
	if (!dir || !*dir) dir = getenv("TMPDIR");
	if (!dir || !*dir) dir = "/tmp";
	const char *cxx = getenv("CXX");
	if (!cxx || !*cxx) cxx = "c++";
	char base[4096], src[4200], so[4200], cmd[16384];
	snprintf(base, sizeof base, "%s/gotrain-fake-%016llx", dir, (unsigned long long)fnv(p->src));
	snprintf(src, sizeof src, "%s.cc", base);
	snprintf(so, sizeof so, "%s.so", base);
	struct stat st;
	free(p->log);
	p->log = strdup("");
	if (stat(so, &st) != 0) {
		FILE *f = fopen(src, "w");
		if (!f) return NVRTC_ERROR_COMPILATION;
		fputs(p->src, f);
		fclose(f);
		char tmp[4300];
		snprintf(tmp, sizeof tmp, "%s.%d.tmp", so, (int)getpid());
		snprintf(cmd, sizeof cmd, "%s -O2 -shared -fPIC -ffp-contract=off -o '%s' -x c++ '%s' 2>&1", cxx, tmp, src);
		FILE *c = popen(cmd, "r");
		if (!c) return NVRTC_ERROR_COMPILATION;
		char buf[4096];
		size_t n;
		size_t len = 0;
		while ((n = fread(buf, 1, sizeof buf, c)) > 0) {
			p->log = realloc(p->log, len + n + 1);
			memcpy(p->log + len, buf, n);
			len += n;
			p->log[len] = 0;
		}
		int rc = pclose(c);
		if (rc != 0) {
			unlink(tmp);
			return NVRTC_ERROR_COMPILATION;
		}
		rename(tmp, so);  // atomic, so concurrent compiles of one source agree
	}
	free(p->ptx);
	p->ptx = NULL;
	appendf(&p->ptx, "//GOTRAIN-FAKE-PTX\n.so %s\n", so);
	kernels(p->src, &p->ptx);
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTXSize(struct program *p, size_t *n) {
	if (!p || !p->ptx) return NVRTC_ERROR_INVALID_PROGRAM;
	*n = strlen(p->ptx) + 1;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTX(struct program *p, char *out) {
	if (!p || !p->ptx) return NVRTC_ERROR_INVALID_PROGRAM;
	memcpy(out, p->ptx, strlen(p->ptx) + 1);
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLogSize(struct program *p, size_t *n) {
	if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
	*n = (p->log ? strlen(p->log) : 0) + 1;
	return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetProgramLog(struct program *p, char *out) {
	if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
	const char *l = p->log ? p->log : "";
	memcpy(out, l, strlen(l) + 1);
	return NVRTC_SUCCESS;
}
