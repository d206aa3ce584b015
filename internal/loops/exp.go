package loops

import "math"

// ExpSubTo is a softmax's exponentials:
//
//	for i, v := range x { dst[i] = exp(v - shift); sum += dst[i] }
//
// for shift ≥ every x[i] (a row's maximum), so every exponent is ≤ 0.
// float64 calls math.Exp and sums in order. float32 computes exp with
// expNeg32, in float32 arithmetic, to about 2 float32 ulps (math.Exp costs
// 8-15 ns an element, and attention's softmax was a tenth of a small
// GPT's training step), and sums in 8 lanes, lane j taking the
// elements i ≡ j (mod 8) of the longest prefix that is a multiple of 8;
// then the lanes pairwise, ((0+1)+(2+3))+((4+5)+(6+7)), then the rest in
// order. On amd64 with AVX2 float32 runs 8 lanes at a time, with the bits
// of the Go loop.
func ExpSubTo[T Float](dst, x []T, shift T) T {
	dst = dst[:len(x)]
	if xs, ok := any(x).([]float32); ok {
		s := expSub32(any(dst).([]float32), xs, any(shift).(float32))
		return any(s).(T)
	}
	var s T
	for i, v := range x {
		e := T(math.Exp(float64(v - shift)))
		dst[i] = e
		s += e
	}
	return s
}

func expSub32(dst, x []float32, shift float32) float32 {
	var acc [8]float32
	n := len(x) &^ 7
	if useVector && hasAVX2 {
		expSubAVX32(dst[:n], x[:n], shift, &acc, &poly32)
	} else {
		for i := range n {
			e := expNeg32(x[i] - shift)
			dst[i] = e
			acc[i%8] += e
		}
	}
	s := ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
	for i := n; i < len(x); i++ {
		e := expNeg32(x[i] - shift)
		dst[i] = e
		s += e
	}
	return s
}

// polyConsts are the constants of expNeg32 and normCDF32, each repeated in 8 lanes so that
// the assembly reads them as vector operands, in this order.
type polyConsts struct {
	abs, half, negHalf, one, two [8]float32
	expMin, log2e, ln2Hi, ln2Lo  [8]float32
	exp                          [8][8]float32 // 1/7!, 1/6!, ..., 1/1!, 1/0!
	bias                         [8]int32      // 127, the float32 exponent bias
	invSqrt2Pi                   [8]float32
	core                         [8][8]float32 // coreCDF, highest first
	tail                         [9][8]float32 // tailCDF, highest first
}

const (
	// expMin32 is where expNeg32 gives 0: e⁻⁸⁷ is near float32's smallest
	// normal, and 2ⁿ for the n below it is not.
	expMin32 = -87
	log2e32  = 1.44269504
	// ln2Hi32 + ln2Lo32 = ln 2 with ln2Hi32 of 9 bits, so n·ln2Hi32 is
	// exact for the |n| < 2⁸ that expNeg32 meets.
	ln2Hi32      = 0.693359375
	ln2Lo32      = -2.12194440e-4
	invSqrt2Pi32 = 0.398942280
)

var poly32 = func() (k polyConsts) {
	fill := func(d *[8]float32, v float32) {
		for i := range d {
			d[i] = v
		}
	}
	fill(&k.abs, math.Float32frombits(0x7fffffff))
	fill(&k.half, 0.5)
	fill(&k.negHalf, -0.5)
	fill(&k.one, 1)
	fill(&k.two, 2)
	fill(&k.expMin, expMin32)
	fill(&k.log2e, log2e32)
	fill(&k.ln2Hi, ln2Hi32)
	fill(&k.ln2Lo, ln2Lo32)
	for i := range k.exp {
		fill(&k.exp[i], expTaylor32[len(expTaylor32)-1-i])
	}
	for i := range k.bias {
		k.bias[i] = 127
	}
	fill(&k.invSqrt2Pi, invSqrt2Pi32)
	for i := range k.core {
		fill(&k.core[i], coreCDF[len(coreCDF)-1-i])
	}
	for i := range k.tail {
		fill(&k.tail[i], tailCDF[len(tailCDF)-1-i])
	}
	return k
}()

// expTaylor32 are the Taylor coefficients of eʳ, 1/0! to 1/7!.
var expTaylor32 = [8]float32{1, 1, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040}

// expNeg32 returns eʰ for h ≤ 0 to about 2 float32 ulps, 0 below expMin32;
// a NaN gives a NaN. It splits h = n·ln2 + r with |r| ≤ ln2/2 and sums
// eʳ's Taylor series to r⁷. Keep in sync with the EXP macro in exp_amd64.s.
func expNeg32(h float32) float32 {
	if h < expMin32 {
		return 0
	}
	n := float32(math.RoundToEven(float64(h * log2e32)))
	r := h - float32(n*ln2Hi32)
	r = r - float32(n*ln2Lo32)
	c := &expTaylor32
	p := c[7]
	for i := 6; i >= 0; i-- {
		// The conversion keeps a compiler from fusing the multiply-add,
		// which the assembly does not.
		p = float32(p*r) + c[i]
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
