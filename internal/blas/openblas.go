//go:build cgo && !noopenblas

// The OpenBLAS build of sgemm and dgemm; gonum.go is the pure-Go one, and
// gemm.go handles the empty cases for both.

package blas

/*
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

func trans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

// sgemm is Sgemm with m, n, k > 0.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	pa, pb := (*C.float)(unsafe.Pointer(&a[0])), (*C.float)(unsafe.Pointer(&b[0]))
	C.cblas_sgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), pa, C.blasint(lda), pb, C.blasint(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// dgemm is Dgemm with m, n, k > 0.
func dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	pa, pb := (*C.double)(unsafe.Pointer(&a[0])), (*C.double)(unsafe.Pointer(&b[0]))
	C.cblas_dgemm(C.CblasRowMajor, trans(transA), trans(transB), C.blasint(m), C.blasint(n), C.blasint(k),
		C.double(alpha), pa, C.blasint(lda), pb, C.blasint(ldb), C.double(beta),
		(*C.double)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// SetThreads sets how many threads OpenBLAS uses for each call. With several
// replicas computing at once, each should use one thread (or the cores divided
// among them), or the replicas' BLAS threads fight over the cores.
// Values below 1 are treated as 1.
func SetThreads(n int) {
	if n < 1 {
		n = 1
	}
	C.openblas_set_num_threads(C.int(n))
}

// Threads reports how many threads OpenBLAS uses for each call.
func Threads() int { return int(C.openblas_get_num_threads()) }

// Name describes the BLAS implementation in use, e.g. "openblas (Haswell)".
func Name() string {
	return "openblas (" + C.GoString(C.openblas_get_corename()) + ")"
}
