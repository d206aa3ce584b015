package loops

import "math"

// Max returns the largest element of x that is not a NaN, or -Inf if there
// is none: a softmax's row maximum (graph's Softmax).
//
//	m := -Inf
//	for _, v := range x { if v > m { m = v } }
//
// float64 is that loop. float32 keeps 8 lanes, lane j taking the elements i
// ≡ j (mod 8) of the longest prefix that is a multiple of 8 by that rule,
// then takes the lanes in order and the rest of x in order; the result is
// the loop's but for the sign of a zero. On amd64 with AVX float32 runs 8
// lanes at a time, with the bits of the Go loop.
func Max[T Float](x []T) T {
	if xs, ok := any(x).([]float32); ok {
		return any(max32(xs)).(T)
	}
	m := T(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

func max32(x []float32) float32 {
	m := float32(math.Inf(-1))
	n := len(x) &^ 7
	if n > 0 {
		// Attention's causal rows are often shorter than 8: they skip the
		// lanes altogether.
		var acc [8]float32
		if useVector && hasAVX {
			maxAVX32(x[:n], &acc)
		} else {
			acc = [8]float32{m, m, m, m, m, m, m, m}
			for i := 0; i < n; i += 8 {
				for j, v := range x[i : i+8] {
					if v > acc[j] {
						acc[j] = v
					}
				}
			}
		}
		for _, v := range acc {
			if v > m {
				m = v
			}
		}
	}
	for _, v := range x[n:] {
		if v > m {
			m = v
		}
	}
	return m
}
