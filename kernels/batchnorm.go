package kernels

// The per-channel loops of a batch norm (graph's batch norm ops, issue 36)
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
	for p := 0; p < len(x); p += c {
		px, py := x[p:p+c:p+c], dst[p:p+c:p+c]
		if res != nil {
			pr := res[p : p+c : p+c]
			for j, v := range px {
				v = (v-mean[j])*a[j] + beta[j] + pr[j]
				if relu && v < 0 {
					v = 0
				}
				py[j] = v
			}
			continue
		}
		for j, v := range px {
			v = (v-mean[j])*a[j] + beta[j]
			if relu && v < 0 {
				v = 0
			}
			py[j] = v
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
	for p := 0; p < len(x); p += c {
		px, pd := x[p:p+c:p+c], dy[p:p+c:p+c]
		if y != nil {
			py := y[p : p+c : p+c]
			for j, v := range px {
				if py[j] > 0 {
					d := float64(pd[j])
					sdz[j] += d
					sdzx[j] += d * float64(v-mean[j])
				}
			}
			continue
		}
		for j, v := range px {
			d := float64(pd[j])
			sdz[j] += d
			sdzx[j] += d * float64(v-mean[j])
		}
	}
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
	k, ka, kb = k[:c], ka[:c], kb[:c]
	dst, dy = dst[:len(x)], dy[:len(x)]
	if y != nil {
		y = y[:len(x)]
	}
	for p := 0; p < len(x); p += c {
		px, pd, po := x[p:p+c:p+c], dy[p:p+c:p+c], dst[p:p+c:p+c]
		if y != nil {
			py := y[p : p+c : p+c]
			for j, v := range px {
				d := pd[j]
				if py[j] <= 0 {
					d = 0
				}
				po[j] = k[j]*d - w*(ka[j]+kb[j]*(v-mean[j]))
			}
			continue
		}
		for j, v := range px {
			po[j] = k[j]*pd[j] - w*(ka[j]+kb[j]*(v-mean[j]))
		}
	}
}
