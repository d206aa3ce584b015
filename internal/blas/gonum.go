//go:build !cgo || noopenblas

// The pure-Go build of sgemm and dgemm, on gonum; gemm.go handles the
// empty cases for both builds.

package blas

import (
	gblas "gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

var impl gonum.Implementation

func trans(t bool) gblas.Transpose {
	if t {
		return gblas.Trans
	}
	return gblas.NoTrans
}

// sgemm is Sgemm with m, n, k > 0.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// dgemm is Dgemm with m, n, k > 0.
func dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	impl.Dgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SetThreads does nothing in the pure-Go build: gonum's gemm parallelises
// internally over GOMAXPROCS.
func SetThreads(n int) {}

// Threads reports 1: the pure-Go build has no BLAS thread pool of its own.
func Threads() int { return 1 }

// Name describes the BLAS implementation in use.
func Name() string { return "gonum (pure Go)" }
