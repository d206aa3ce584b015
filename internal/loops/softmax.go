package loops

// Dot is Σ x[j]·y[j] in float64, in Sum's 4 lanes and order, each
// term float64(x[j]) * float64(y[j]): a softmax gradient's row sum (graph's
// softmax_grad and causal_softmax_grad). y is at least as long
// as x. On amd64 with AVX float32 runs 4 lanes at a time, widened to
// float64, with the bits of the Go loop.
func Dot[T Float](x, y []T) float64 {
	var l [4]float64
	n := len(x) &^ 3
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX {
		laneDotAVX32(xs[:n], any(y).([]float32)[:n], &l)
	} else {
		for j := range n {
			l[j%4] += float64(float64(x[j]) * float64(y[j]))
		}
	}
	s := (l[0] + l[1]) + (l[2] + l[3])
	for j := n; j < len(x); j++ {
		s += float64(float64(x[j]) * float64(y[j]))
	}
	return s
}

// SoftmaxGradTo is a softmax's gradient over one row of its output y, given
// the row's s = Σ y⊙dy:
//
//	for j, v := range y { dst[j] = T(float64(v) * (float64(dy[j]) - s)) }
//
// dst and dy are at least as long as y. On amd64 with AVX float32 runs 4
// lanes at a time in float64, with the bits of the Go loop.
func SoftmaxGradTo[T Float](dst, y, dy []T, s float64) {
	n := 0
	if ys, ok := any(y).([]float32); ok && useVector && hasAVX {
		n = len(y) &^ 3
		softmaxGradAVX32(any(dst).([]float32)[:n], ys[:n], any(dy).([]float32)[:n], s)
	}
	for j := n; j < len(y); j++ {
		dst[j] = T(float64(y[j]) * float64(float64(dy[j])-s))
	}
}
