// Package blas is gotrain's minimal binding to a BLAS library: the two general
// matrix products the graph engine needs, and control over BLAS threads.
//
// By default it calls OpenBLAS through cgo (Debian's libopenblas-dev). Building
// with the noopenblas tag, or with cgo disabled, switches to gonum's pure-Go
// BLAS with the same API; it is correct but several times slower.
//
// All matrices are row-major. Sgemm and Dgemm compute
//
//	C = alpha·op(A)·op(B) + beta·C
//
// where op(X) is X or Xᵀ, op(A) is m×k, op(B) is k×n and C is m×n. The slices are
// read and written in place and are not checked beyond what the underlying
// library checks; callers validate shapes.
//
// Sgemm and Dgemm are safe for concurrent use on disjoint outputs.
package blas
