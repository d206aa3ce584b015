package blas

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
