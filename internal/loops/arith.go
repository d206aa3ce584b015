package loops

// SubTo is: for i, v := range a { dst[i] = v - b[i] }.
// On amd64 with AVX it runs 8 float32 or 4 float64 lanes at a time, with
// the same bits: batch norm centers every activation with it.
func SubTo[T Float](dst, a, b []T) {
	dst, b, done := vectorPrefix(dst, a, b, subVector[T])
	for i := done; i < len(a); i++ {
		dst[i] = a[i] - b[i]
	}
}

// MulTo is: for i, v := range a { dst[i] = v * b[i] }.
// On amd64 with AVX it runs 8 float32 or 4 float64 lanes at a time, with
// the same bits: batch norm scales every activation and its gradient with it.
func MulTo[T Float](dst, a, b []T) {
	dst, b, done := vectorPrefix(dst, a, b, mulVector[T])
	for i := done; i < len(a); i++ {
		dst[i] = a[i] * b[i]
	}
}

// DivTo is: for i, v := range a { dst[i] = v / b[i] }.
// On amd64 with AVX it runs 8 float32 or 4 float64 lanes at a time, with
// the same bits (the vector division is IEEE's, correctly rounded).
func DivTo[T Float](dst, a, b []T) {
	dst, b, done := vectorPrefix(dst, a, b, divVector[T])
	for i := done; i < len(a); i++ {
		dst[i] = a[i] / b[i]
	}
}

// vectorPrefix cuts dst and b to a's length and runs vec, an assembly loop
// of AddTo's kind, over the longest prefix it handles (none without
// useVector), returning the cut slices and that prefix's length.
func vectorPrefix[T Float](dst, a, b []T, vec func(dst, a, b []T) int) ([]T, []T, int) {
	dst = dst[:len(a)]
	b = b[:len(a)]
	if !useVector {
		return dst, b, 0
	}
	return dst, b, vec(dst, a, b)
}
