//go:build !cgo || noopenblas

// The pure-Go build: the same API and edge cases as openblas.go, on gonum.
// Keep the two files in sync.

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

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32, row-major.
// op(A) is m×k with leading dimension lda, op(B) is k×n with leading dimension
// ldb, C is m×n with leading dimension ldc.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm in float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	impl.Dgemm(trans(transA), trans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SetThreads does nothing in the pure-Go build: gonum's gemm parallelises
// internally over GOMAXPROCS.
func SetThreads(n int) {}

// Threads reports 1: the pure-Go build has no BLAS thread pool of its own.
func Threads() int { return 1 }

// Name describes the BLAS implementation in use.
func Name() string { return "gonum (pure Go)" }
