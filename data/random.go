package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// pcgStream is PCG's second seed word. It is fixed so that one seed names
// one sequence, whatever function draws from it.
const pcgStream = 0x5851f42d4c957f2d

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, pcgStream)) }

// RandomNormal returns a tensor of the given shape with values drawn from
// the standard normal distribution by a PCG generator seeded with seed: the
// same seed and shape always give the same tensor.
// It panics with an error wrapping ErrShape if a dimension is negative, and
// ErrMemory if the tensor would not fit in the machine's memory.
func RandomNormal(seed uint64, shape ...int) Tensor {
	t := zeros("RandomNormal", shape)
	r := newRand(seed)
	for i := range t.Data {
		t.Data[i] = r.NormFloat64()
	}
	return t
}

// RandomUniform returns a tensor of the given shape with values drawn
// uniformly from [lo, hi) by a PCG generator seeded with seed.
// It panics with an error wrapping ErrArgument unless lo ≤ hi and both are
// finite, with ErrShape if a dimension is negative, and with ErrMemory if
// the tensor would not fit in the machine's memory.
func RandomUniform(seed uint64, lo, hi float64, shape ...int) Tensor {
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		panic(fmt.Errorf("%w: RandomUniform: want finite lo ≤ hi, got [%v, %v)", ErrArgument, lo, hi))
	}
	t := zeros("RandomUniform", shape)
	r := newRand(seed)
	for i := range t.Data {
		t.Data[i] = lo + (hi-lo)*r.Float64()
	}
	return t
}

// RandomInts returns a tensor of the given shape with integers drawn
// uniformly from [0, n) by a PCG generator seeded with seed: n is the bound,
// not a dimension, so RandomInts(2, 10, 256) is 256 class labels in [0, 10),
// TensorFlow's tf.random.uniform([256], maxval=10, dtype=tf.int64, seed=2).
// The arguments come in the order of RandomNormal and RandomUniform (seed,
// then the distribution, then the shape, since a variadic shape must come
// last in Go), not in tf.random.uniform's (shape first). The values are
// float64, the one element type of a Tensor; every integer below 2⁵³ is
// exact, and the sparse losses and metrics take class ids as such floats.
// It panics with an error wrapping ErrArgument if n ≤ 0, with ErrShape if a
// dimension is negative, and with ErrMemory if the tensor would not fit in
// the machine's memory.
func RandomInts(seed uint64, n int, shape ...int) Tensor {
	if n <= 0 {
		panic(fmt.Errorf("%w: RandomInts: want n > 0, got %d", ErrArgument, n))
	}
	t := zeros("RandomInts", shape)
	r := newRand(seed)
	for i := range t.Data {
		t.Data[i] = float64(r.IntN(n))
	}
	return t
}
