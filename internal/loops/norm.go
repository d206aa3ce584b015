package loops

// The row loops of a LayerNorm or RMSNorm (graph's norm ops), in float64
// whatever T. The sums run in 4 float64 lanes, lane k taking the elements
// j ≡ k (mod 4) of the longest prefix of the row that is a multiple of 4,
// then (lane 0 + lane 1) + (lane 2 + lane 3), then the rest in order: four
// independent additions a step, which AVX runs as one (a GPT step spent a
// tenth of its time in these loops). On amd64 with AVX float32
// rows run 4 lanes at a time, widened to float64, with the bits of the Go
// loops. graph's norm_cuda.go keeps its own copies in sync with these.

// Sum is Σ x[j] in float64, in 4 lanes:
//
//	for j, v := range x[:n] { lane[j%4] += float64(v) }  // n = len(x) &^ 3
//	s := (lane[0] + lane[1]) + (lane[2] + lane[3])
//	for _, v := range x[n:] { s += float64(v) }
func Sum[T Float](x []T) float64 {
	var l [4]float64
	n := len(x) &^ 3
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX {
		laneSumAVX32(xs[:n], &l)
	} else {
		for j := 0; j < n; j += 4 {
			q := x[j : j+4 : j+4]
			l[0] += float64(q[0])
			l[1] += float64(q[1])
			l[2] += float64(q[2])
			l[3] += float64(q[3])
		}
	}
	s := (l[0] + l[1]) + (l[2] + l[3])
	for _, v := range x[n:] {
		s += float64(v)
	}
	return s
}

// SumSqDev is Σ (x[j] - mean)² in float64, in Sum's lanes and
// order, each term d·d for d = float64(x[j]) - mean.
func SumSqDev[T Float](x []T, mean float64) float64 {
	var l [4]float64
	n := len(x) &^ 3
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX {
		laneSumSqDevAVX32(xs[:n], mean, &l)
	} else {
		for j := range n {
			d := float64(x[j]) - mean
			l[j%4] += float64(d * d)
		}
	}
	s := (l[0] + l[1]) + (l[2] + l[3])
	for _, v := range x[n:] {
		d := float64(v) - mean
		s += float64(d * d)
	}
	return s
}

// NormGradSums returns Σ g[j] and Σ g[j]·x̂[j] in float64, in Sum's
// lanes and order, for
//
//	x̂ := (float64(x[j]) - mean) * rstd
//	g := float64(dy[j]) * float64(gamma[j])  // float64(dy[j]) if gamma is nil
//
// a norm's gradient sums over one row. dy and gamma (unless nil) are at
// least as long as x.
func NormGradSums[T Float](x, dy, gamma []T, mean, rstd float64) (sg, sgx float64) {
	var l [8]float64 // the lanes of Σ g, then of Σ g·x̂
	n := len(x) &^ 3
	if xs, ok := any(x).([]float32); ok && gamma != nil && useVector && hasAVX {
		normGradSumsAVX32(xs[:n], any(dy).([]float32)[:n], any(gamma).([]float32)[:n], mean, rstd, &l)
	} else {
		for j := range n {
			g, gx := normGradTerms(x, dy, gamma, j, mean, rstd)
			l[j%4] += g
			l[4+j%4] += gx
		}
	}
	sg, sgx = (l[0]+l[1])+(l[2]+l[3]), (l[4]+l[5])+(l[6]+l[7])
	for j := n; j < len(x); j++ {
		g, gx := normGradTerms(x, dy, gamma, j, mean, rstd)
		sg += g
		sgx += gx
	}
	return sg, sgx
}

// normGradTerms is NormGradSums's g and g·x̂ for element j.
func normGradTerms[T Float](x, dy, gamma []T, j int, mean, rstd float64) (g, gx float64) {
	xh := float64((float64(x[j]) - mean) * rstd)
	g = float64(dy[j])
	if gamma != nil {
		g *= float64(gamma[j])
	}
	return g, float64(g * xh)
}

// NormTo is a norm's output row:
//
//	for j, v := range x {
//		y := (float64(v) - mean) * rstd
//		y *= float64(gamma[j])  // unless gamma is nil
//		y += float64(beta[j])   // unless beta is nil
//		dst[j] = T(y)
//	}
//
// dst, gamma and beta (unless nil) are at least as long as x.
func NormTo[T Float](dst, x, gamma, beta []T, mean, rstd float64) {
	n := 0
	if xs, ok := any(x).([]float32); ok && gamma != nil && useVector && hasAVX {
		n = len(x) &^ 3
		var bs []float32 // nil: no β
		if beta != nil {
			bs = any(beta).([]float32)[:n]
		}
		normAVX32(any(dst).([]float32)[:n], xs[:n], any(gamma).([]float32)[:n], bs, mean, rstd)
	}
	for j := n; j < len(x); j++ {
		y := float64((float64(x[j]) - mean) * rstd)
		if gamma != nil {
			y *= float64(gamma[j])
		}
		if beta != nil {
			y += float64(beta[j])
		}
		dst[j] = T(y)
	}
}

// NormGradTo is a norm's input gradient over one row, with NormGradSums's
// x̂ and g and the row's means mg of g (0 for RMS) and mgx of g·x̂:
//
//	for j := range x { dst[j] = T(rstd * ((g - mg) - x̂*mgx)) }
//
// dst, dy and gamma (unless nil) are at least as long as x.
func NormGradTo[T Float](dst, x, dy, gamma []T, mean, rstd, mg, mgx float64) {
	n := 0
	if xs, ok := any(x).([]float32); ok && gamma != nil && useVector && hasAVX {
		n = len(x) &^ 3
		normGradAVX32(any(dst).([]float32)[:n], xs[:n], any(dy).([]float32)[:n], any(gamma).([]float32)[:n], mean, rstd, mg, mgx)
	}
	for j := n; j < len(x); j++ {
		xh := float64((float64(x[j]) - mean) * rstd)
		g := float64(dy[j])
		if gamma != nil {
			g *= float64(gamma[j])
		}
		dst[j] = T(rstd * float64(float64(g-mg)-float64(xh*mgx)))
	}
}

// NormGammaGradAdd adds one row's terms of a norm's γ gradient:
//
//	for j, v := range x { acc[j] += float64(dy[j]) * ((float64(v) - mean) * rstd) }
//
// acc and dy are at least as long as x.
func NormGammaGradAdd[T Float](acc []float64, x, dy []T, mean, rstd float64) {
	n := 0
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX {
		n = len(x) &^ 3
		normGammaGradAVX32(acc[:n], xs[:n], any(dy).([]float32)[:n], mean, rstd)
	}
	for j := n; j < len(x); j++ {
		acc[j] += float64(float64(dy[j]) * float64((float64(x[j])-mean)*rstd))
	}
}
