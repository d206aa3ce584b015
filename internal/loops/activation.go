package loops

import "math"

// ReLUGrad is the gradient of ReLU written in terms of its output y:
//
//	for i, v := range y { if v > 0 { out[i] = dy[i] } else { out[i] = 0 } }
//
// except that it masks bits instead of comparing floats, so a y that is a
// NaN with its sign bit clear passes dy too. A branch on v > 0 mispredicts
// about half the time on a layer's activations (3× slower, measured). On
// amd64 with AVX2 it runs 8 float32 or 4 float64 lanes at a time.
func ReLUGrad[T Float](out, y, dy []T) {
	dy, out = dy[:len(y)], out[:len(y)]
	done := 0
	if useVector {
		done = reluGradVector(out, y, dy)
	}
	out, y, dy = out[done:], y[done:], dy[done:]
	switch ys := any(y).(type) {
	case []float32:
		dy, out := any(dy).([]float32), any(out).([]float32)
		for i, v := range ys {
			b := int32(math.Float32bits(v))
			// The sign bit of -b &^ b is set exactly when b > 0.
			m := uint32((-b &^ b) >> 31)
			out[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
		}
	case []float64:
		dy, out := any(dy).([]float64), any(out).([]float64)
		for i, v := range ys {
			b := int64(math.Float64bits(v))
			m := uint64((-b &^ b) >> 63)
			out[i] = math.Float64frombits(math.Float64bits(dy[i]) & m)
		}
	default:
		for i, v := range y {
			if v > 0 {
				out[i] = dy[i]
			} else {
				out[i] = 0
			}
		}
	}
}

// AddReLU is a dense layer's bias and ReLU:
//
//	for i, v := range a { dst[i] = max(v+b[i], 0) }
//
// The builtin max compiles without a branch. On amd64 with AVX it runs 8
// float32 or 4 float64 lanes at a time, with the same bits.
func AddReLU[T Float](dst, a, b []T) {
	dst, b = dst[:len(a)], b[:len(a)]
	done := 0
	if useVector {
		done = addReLUVector(dst, a, b)
	}
	for i := done; i < len(a); i++ {
		dst[i] = max(a[i]+b[i], 0)
	}
}
