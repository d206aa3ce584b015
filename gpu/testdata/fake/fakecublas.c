// fakecublas.c: a stand-in for libcublas.so over host memory, for gotrain's
// tests without a GPU (package gpu, issue 13): naive column-major sgemm and
// dgemm with transposes, summing over k in order in the element type, and
// their batched forms over arrays of pointers (issue 22).
#include <stdlib.h>

typedef int cublasStatus_t;
enum {
	CUBLAS_STATUS_SUCCESS = 0,
	CUBLAS_STATUS_NOT_INITIALIZED = 1,
	CUBLAS_STATUS_ALLOC_FAILED = 3,
	CUBLAS_STATUS_INVALID_VALUE = 7,
};

struct handle { void *stream; int math; };

const char *cublasGetStatusName(cublasStatus_t s) {
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
	case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	}
	return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t s) {
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	}
	return "unknown error";
}

cublasStatus_t cublasCreate_v2(struct handle **h) {
	*h = calloc(1, sizeof **h);
	return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(struct handle *h) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	free(h);
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(struct handle *h, void *s) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	h->stream = s;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(struct handle *h, int mode) {
	if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
	h->math = mode;
	return CUBLAS_STATUS_SUCCESS;
}

// GEMM defines C = alpha op(A) op(B) + beta C, column-major, m×n, k inner;
// C is not read when beta is 0, as in the reference BLAS.
#define GEMM(NAME, T)                                                                          \
	cublasStatus_t NAME(struct handle *h, int ta, int tb, int m, int n, int k, const T *alpha, \
		const T *a, int lda, const T *b, int ldb, const T *beta, T *c, int ldc) {            \
		if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;                                          \
		if (m < 0 || n < 0 || k < 0 || ta < 0 || ta > 1 || tb < 0 || tb > 1)                   \
			return CUBLAS_STATUS_INVALID_VALUE;                                                  \
		if (lda < (ta ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) ||                                  \
			ldb < (tb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) || ldc < (m > 1 ? m : 1))           \
			return CUBLAS_STATUS_INVALID_VALUE;                                                  \
		for (int j = 0; j < n; j++)                                                            \
			for (int i = 0; i < m; i++) {                                                      \
				T s = 0;                                                                       \
				for (int l = 0; l < k; l++) {                                                  \
					T x = ta ? a[l + (long)i * lda] : a[i + (long)l * lda];                    \
					T y = tb ? b[j + (long)l * ldb] : b[l + (long)j * ldb];                    \
					s += x * y;                                                                \
				}                                                                              \
				T *o = &c[i + (long)j * ldc];                                                  \
				*o = *beta == 0 ? *alpha * s : *alpha * s + *beta * *o;                        \
			}                                                                                  \
		return CUBLAS_STATUS_SUCCESS;                                                          \
	}

GEMM(cublasSgemm_v2, float)
GEMM(cublasDgemm_v2, double)

// GEMM_BATCHED defines the batched form of GEMM1 over arrays of batch
// pointers, one product after another.
#define GEMM_BATCHED(NAME, GEMM1, T)                                                           \
	cublasStatus_t NAME(struct handle *h, int ta, int tb, int m, int n, int k, const T *alpha, \
		const T *const a[], int lda, const T *const b[], int ldb, const T *beta, T *const c[], \
		int ldc, int batch) {                                                                  \
		if (batch < 0) return CUBLAS_STATUS_INVALID_VALUE;                                     \
		for (int i = 0; i < batch; i++) {                                                      \
			cublasStatus_t s = GEMM1(h, ta, tb, m, n, k, alpha, a[i], lda, b[i], ldb, beta,    \
				c[i], ldc);                                                                    \
			if (s != CUBLAS_STATUS_SUCCESS) return s;                                          \
		}                                                                                      \
		return CUBLAS_STATUS_SUCCESS;                                                          \
	}

GEMM_BATCHED(cublasSgemmBatched, cublasSgemm_v2, float)
GEMM_BATCHED(cublasDgemmBatched, cublasDgemm_v2, double)
