package loops

import "math"

// The per-channel loops of a batch norm (graph's batch norm ops)
// on channels-last data: x holds pixels of c channels one after the
// other, and every per-channel vector (sums, means, coefficients) has c
// elements, c = len of that vector. Each loop is one pass over its
// tensors, so a forward batch norm reads x twice (statistics, then the
// normalization with its ReLU or residual add) and its backward pass reads
// x and dy twice. Sums are accumulated in float64 whatever T.

// BatchNormSumsAdd adds each channel's sum and sum of squares of the pixels
// x, weighted by w, to sum and sq:
//
//	for p := 0; p < len(x); p += c {
//		for j, v := range x[p : p+c] { sum[j] += w·v; sq[j] += w·v·v }  // in float64
//	}
//
// It panics unless len(sq) == len(sum) = c and x is whole pixels of c.
func BatchNormSumsAdd[T Float](sum, sq []float64, w float64, x []T) {
	c := len(sum)
	checkRows("BatchNormSumsAdd", len(x), c)
	sq = sq[:c]
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX && c%4 == 0 {
		bnSumsAVX32(sum, sq, w, xs)
		return
	}
	for p := 0; p < len(x); p += c {
		px := x[p : p+c : p+c]
		for j, v := range px {
			f := float64(v)
			sum[j] += w * f
			sq[j] += w * f * f
		}
	}
}

// BatchNormTo normalizes the pixels x, scales and shifts them, adds res
// (nil: nothing) and applies a ReLU if relu is set:
//
//	for p := 0; p < len(x); p += c {
//		for j := range c {
//			v := (x[p+j] - mean[j])·a[j] + beta[j] + res[p+j]
//			dst[p+j] = relu ? max(v, 0) : v
//		}
//	}
//
// with a[j] = γ[j]/σ[j], in T. It panics unless mean, a and beta have c
// elements and dst, x (and res) are the same whole pixels of c.
func BatchNormTo[T Float](dst, x, res, mean, a, beta []T, relu bool) {
	c := len(mean)
	checkRows("BatchNormTo", len(x), c)
	a, beta = a[:c], beta[:c]
	dst = dst[:len(x)]
	if res != nil {
		res = res[:len(x)]
	}
	mean = mean[:c]
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX && c%8 == 0 {
		floor := float32(math.Inf(-1))
		if relu {
			floor = 0
		}
		bnNormAVX32(any(dst).([]float32), xs, any(res).([]float32), any(mean).([]float32), any(a).([]float32), any(beta).([]float32), floor)
		return
	}
	// max, not a branch: the signs are random, and a mispredicted branch
	// per element costs more than the arithmetic.
	for p := 0; p < len(x); p += c {
		px, py := x[p:p+c:p+c], dst[p:p+c:p+c]
		switch {
		case res != nil && relu:
			pr := res[p : p+c : p+c]
			for j, v := range px {
				py[j] = max((v-mean[j])*a[j]+beta[j]+pr[j], 0)
			}
		case res != nil:
			pr := res[p : p+c : p+c]
			for j, v := range px {
				py[j] = (v-mean[j])*a[j] + beta[j] + pr[j]
			}
		case relu:
			for j, v := range px {
				py[j] = max((v-mean[j])*a[j]+beta[j], 0)
			}
		default:
			for j, v := range px {
				py[j] = (v-mean[j])*a[j] + beta[j]
			}
		}
	}
}

// BatchNormGradSumsAdd adds, per channel, Σ dz and Σ dz·(x - mean) to sdz
// and sdzx, where dz = dy, or dy where y > 0 and 0 elsewhere if y is not
// nil (the gradient through a ReLU whose output is y):
//
//	for p := 0; p < len(x); p += c {
//		for j := range c {
//			dz := dy[p+j]; if y != nil && y[p+j] <= 0 { dz = 0 }
//			sdz[j] += dz; sdzx[j] += dz·(x[p+j] - mean[j])  // in float64
//		}
//	}
//
// It panics unless sdzx and mean have len(sdz) = c elements and x, dy (and
// y) are the same whole pixels of c.
func BatchNormGradSumsAdd[T Float](sdz, sdzx []float64, x, dy, y, mean []T) {
	c := len(sdz)
	checkRows("BatchNormGradSumsAdd", len(x), c)
	sdzx, mean = sdzx[:c], mean[:c]
	dy = dy[:len(x)]
	if y != nil {
		y = y[:len(x)]
	}
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX2 && c%8 == 0 {
		bnGradSumsAVX32(sdz, sdzx, xs, any(dy).([]float32), any(y).([]float32), any(mean).([]float32))
		return
	}
	if y != nil {
		// Concrete loops: a generic one would call a function per element
		// to mask dy.
		switch xs := any(x).(type) {
		case []float32:
			gradSumsReLU32(sdz, sdzx, xs, any(dy).([]float32), any(y).([]float32), any(mean).([]float32))
		case []float64:
			gradSumsReLU64(sdz, sdzx, xs, any(dy).([]float64), any(y).([]float64), any(mean).([]float64))
		}
		return
	}
	for p := 0; p < len(x); p += c {
		px, pd := x[p:p+c:p+c], dy[p:p+c:p+c]
		for j, v := range px {
			d := float64(pd[j])
			sdz[j] += d
			sdzx[j] += d * float64(v-mean[j])
		}
	}
}

// reluPass32 is dy if y > 0, else 0: dy's bits masked, not a branch, since
// the signs of y are random (ReLUGrad's trick).
func reluPass32(y, dy float32) float32 {
	b := int32(math.Float32bits(y))
	m := uint32((-b &^ b) >> 31) // all ones exactly when b > 0
	return math.Float32frombits(math.Float32bits(dy) & m)
}

// reluPass64 is reluPass32 in float64.
func reluPass64(y, dy float64) float64 {
	b := int64(math.Float64bits(y))
	m := uint64((-b &^ b) >> 63)
	return math.Float64frombits(math.Float64bits(dy) & m)
}

// BatchNormGradTo is a batch norm's input gradient on the pixels of one
// row of weight w (the row's mask), with dz as in BatchNormGradSumsAdd:
//
//	for p := 0; p < len(x); p += c {
//		for j := range c {
//			dst[p+j] = k[j]·dz[p+j] - w·(ka[j] + kb[j]·(x[p+j] - mean[j]))
//		}
//	}
//
// in T, where the caller has folded the scale, 1/σ and the channel's
// all-reduced gradient sums into k, ka and kb. It panics unless k, ka, kb
// and mean have c elements and dst, x, dy (and y) are the same whole
// pixels of c.
func BatchNormGradTo[T Float](dst, x, dy, y, mean, k, ka, kb []T, w T) {
	c := len(mean)
	checkRows("BatchNormGradTo", len(x), c)
	k, ka, kb, mean = k[:c], ka[:c], kb[:c], mean[:c]
	dst, dy = dst[:len(x)], dy[:len(x)]
	if y != nil {
		y = y[:len(x)]
	}
	if xs, ok := any(x).([]float32); ok && useVector && hasAVX2 && c%8 == 0 {
		bnGradAVX32(any(dst).([]float32), xs, any(dy).([]float32), any(y).([]float32), any(mean).([]float32),
			any(k).([]float32), any(ka).([]float32), any(kb).([]float32), float32(w))
		return
	}
	if y != nil {
		switch xs := any(x).(type) {
		case []float32:
			gradReLU32(any(dst).([]float32), xs, any(dy).([]float32), any(y).([]float32), any(mean).([]float32),
				any(k).([]float32), any(ka).([]float32), any(kb).([]float32), float32(w))
		case []float64:
			gradReLU64(any(dst).([]float64), xs, any(dy).([]float64), any(y).([]float64), any(mean).([]float64),
				any(k).([]float64), any(ka).([]float64), any(kb).([]float64), float64(w))
		}
		return
	}
	for p := 0; p < len(x); p += c {
		px, pd, po := x[p:p+c:p+c], dy[p:p+c:p+c], dst[p:p+c:p+c]
		for j, v := range px {
			po[j] = k[j]*pd[j] - w*(ka[j]+kb[j]*(v-mean[j]))
		}
	}
}

// gradSumsReLU32 is BatchNormGradSumsAdd's loop through a ReLU in float32;
// keep in sync with gradSumsReLU64.
func gradSumsReLU32(sdz, sdzx []float64, x, dy, y, mean []float32) {
	c := len(sdz)
	sdzx, mean, dy, y = sdzx[:c], mean[:c], dy[:len(x)], y[:len(x)]
	for p := 0; p < len(x); p += c {
		px, pd, py := x[p:p+c:p+c], dy[p:p+c:p+c], y[p:p+c:p+c]
		for j, v := range px {
			d := float64(reluPass32(py[j], pd[j]))
			sdz[j] += d
			sdzx[j] += d * float64(v-mean[j])
		}
	}
}

func gradSumsReLU64(sdz, sdzx []float64, x, dy, y, mean []float64) {
	c := len(sdz)
	sdzx, mean, dy, y = sdzx[:c], mean[:c], dy[:len(x)], y[:len(x)]
	for p := 0; p < len(x); p += c {
		px, pd, py := x[p:p+c:p+c], dy[p:p+c:p+c], y[p:p+c:p+c]
		for j, v := range px {
			d := reluPass64(py[j], pd[j])
			sdz[j] += d
			sdzx[j] += d * (v - mean[j])
		}
	}
}

// gradReLU32 is BatchNormGradTo's loop through a ReLU in float32; keep in
// sync with gradReLU64.
func gradReLU32(dst, x, dy, y, mean, k, ka, kb []float32, w float32) {
	c := len(mean)
	k, ka, kb, dst, dy, y = k[:c], ka[:c], kb[:c], dst[:len(x)], dy[:len(x)], y[:len(x)]
	for p := 0; p < len(x); p += c {
		px, pd, py, po := x[p:p+c:p+c], dy[p:p+c:p+c], y[p:p+c:p+c], dst[p:p+c:p+c]
		for j, v := range px {
			po[j] = k[j]*reluPass32(py[j], pd[j]) - w*(ka[j]+kb[j]*(v-mean[j]))
		}
	}
}

func gradReLU64(dst, x, dy, y, mean, k, ka, kb []float64, w float64) {
	c := len(mean)
	k, ka, kb, dst, dy, y = k[:c], ka[:c], kb[:c], dst[:len(x)], dy[:len(x)], y[:len(x)]
	for p := 0; p < len(x); p += c {
		px, pd, py, po := x[p:p+c:p+c], dy[p:p+c:p+c], y[p:p+c:p+c], dst[p:p+c:p+c]
		for j, v := range px {
			po[j] = k[j]*reluPass64(py[j], pd[j]) - w*(ka[j]+kb[j]*(v-mean[j]))
		}
	}
}
