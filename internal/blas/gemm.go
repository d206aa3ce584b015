package blas

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
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
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
	dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// scaleC is C = beta·C, the whole product when k == 0. BLAS libraries reject
// the leading dimension 0 an empty A or B has, so the binding handles it.
func scaleC[T float32 | float64](m, n int, beta T, c []T, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row) // not 0·C: NaNs in C must not survive, as in BLAS
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}
