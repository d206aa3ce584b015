package loops

import "math"

// GELU is the exact GELU (PyTorch's default, not the tanh form):
//
//	for i, v := range x { out[i] = v·Φ(v) }
//
// with Φ the standard normal CDF. float64 computes Φ with math.Erf;
// float32 with normCDF32, in float32 arithmetic, to a few float32 ulps
// (math.Erf costs 15-40 ns an element, and GELU was half of a small GPT's
// training step). On amd64 with AVX2 float32 runs 8 lanes at a
// time, with the bits of the Go loop.
func GELU[T Float](out, x []T) {
	out = out[:len(x)]
	if xs, ok := any(x).([]float32); ok {
		out := any(out).([]float32)
		done := 0
		if useVector && hasAVX2 {
			done = len(xs) &^ 7
			geluAVX32(out[:done], xs[:done], &poly32)
		}
		for i := done; i < len(xs); i++ {
			v := xs[i]
			cdf, _ := normCDF32(v)
			out[i] = v * cdf
		}
		return
	}
	for i, v := range x {
		out[i] = T(float64(v) * 0.5 * (1 + math.Erf(float64(v)/math.Sqrt2)))
	}
}

// GELUGrad is GELU's gradient, from its input x:
//
//	for i, v := range x { out[i] = dy[i]·(Φ(v) + v·φ(v)) }
//
// with φ the standard normal density, computed as GELU computes Φ.
func GELUGrad[T Float](out, x, dy []T) {
	out, dy = out[:len(x)], dy[:len(x)]
	if xs, ok := any(x).([]float32); ok {
		out, dy := any(out).([]float32), any(dy).([]float32)
		done := 0
		if useVector && hasAVX2 {
			done = len(xs) &^ 7
			geluGradAVX32(out[:done], xs[:done], dy[:done], &poly32)
		}
		for i := done; i < len(xs); i++ {
			v := xs[i]
			cdf, pdf := normCDF32(v)
			out[i] = dy[i] * (cdf + float32(v*pdf))
		}
		return
	}
	for i, v := range x {
		xf := float64(v)
		cdf := 0.5 * (1 + math.Erf(xf/math.Sqrt2))
		pdf := math.Exp(-0.5*xf*xf) / math.Sqrt(2*math.Pi)
		out[i] = T(float64(dy[i]) * (cdf + xf*pdf))
	}
}

// Φ is two fits of ours, made for these kernels by iteratively reweighted
// least squares against scipy's ndtr and erfcx. Below |x| = 2,
// Φ(x) - ½ = x·P(x²) with P of degree 7, to an absolute error of 4e-9;
// above, 1 - Φ(|x|) = φ(x)·t·Q(t) with t = 1/(1 + |x|/2) and Q of degree
// 8 fitting Mills' ratio to a relative error of 1e-8, so the tails, where
// GELU is small, keep their relative precision. Rounding the coefficients
// and the arithmetic to float32 adds a few ulps.
var (
	coreCDF = [8]float32{3.9894227851524644e-01, -6.6490317528430584e-02, 9.9732191042953087e-03, -1.1866306131922898e-03,
		1.1472180605054887e-04, -9.0427551611081597e-06, 5.3626541673822211e-07, -1.7624934420468988e-08}
	tailCDF = [9]float32{0.5000000049616571, 0.4999985309800805, 0.3750698202817361, 0.12379247230796932,
		-0.1470150733791736, -0.30843282066737004, -0.12321384938244748, 0.7814292599666482, -0.4748969773514162}
)

// normCDF32 returns Φ(x) and φ(x) in float32. Keep in sync with the CORE
// and CDF macros in exp_amd64.s, which compute both branches and pick one.
func normCDF32(x float32) (cdf, pdf float32) {
	z := x * x
	pdf = invSqrt2Pi32 * expNeg32(-0.5*z)
	a := math.Float32frombits(math.Float32bits(x) & 0x7fffffff)
	if a < 2 {
		c := &coreCDF
		p := c[7]
		for i := 6; i >= 0; i-- {
			p = float32(p*z) + c[i]
		}
		return 0.5 + float32(x*p), pdf
	}
	t := 1 / (1 + 0.5*a)
	c := &tailCDF
	q := c[8]
	for i := 7; i >= 0; i-- {
		q = float32(q*t) + c[i]
	}
	q = pdf * t * q
	if x >= 0 {
		return 1 - q, pdf
	}
	return q, pdf
}
