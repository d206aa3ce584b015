package gorgoniamodel

import (
	"math"
	"math/rand/v2"
)

// Init gives a parameter's initial values, shape's product of them in
// row-major order, drawn from rng: a stream seeded by the strategy's seed and
// the parameter's name (strategy.InitStream), so the same model starts from
// the same weights on any replica count and in every run.
type Init func(rng *rand.Rand, shape []int) []float64

// Zeros initializes every value to 0.
func Zeros() Init { return Constant(0) }

// Constant initializes every value to c.
func Constant(c float64) Init {
	return func(_ *rand.Rand, shape []int) []float64 {
		v := make([]float64, size(shape))
		for i := range v {
			v[i] = c
		}
		return v
	}
}

// Uniform draws values uniformly from [low, high).
func Uniform(low, high float64) Init {
	return func(rng *rand.Rand, shape []int) []float64 {
		v := make([]float64, size(shape))
		for i := range v {
			v[i] = low + (high-low)*rng.Float64()
		}
		return v
	}
}

// Gaussian draws values from a normal distribution of the given mean and
// standard deviation.
func Gaussian(mean, stddev float64) Init {
	return func(rng *rand.Rand, shape []int) []float64 {
		v := make([]float64, size(shape))
		for i := range v {
			v[i] = mean + stddev*rng.NormFloat64()
		}
		return v
	}
}

// GlorotU draws values uniformly from ±gain·√(6/(fanIn+fanOut)) (Glorot and
// Bengio's uniform initializer, Keras's default kernel initializer for gain
// 1; gorgonia v0.9.18's GlorotU draws from its normal one instead). See fans
// for fanIn and fanOut.
func GlorotU(gain float64) Init {
	return func(rng *rand.Rand, shape []int) []float64 {
		in, out := fans(shape)
		limit := gain * math.Sqrt(6/float64(in+out))
		return Uniform(-limit, limit)(rng, shape)
	}
}

// GlorotN draws values from a normal distribution of standard deviation
// gain·√(2/(fanIn+fanOut)). See fans for fanIn and fanOut.
func GlorotN(gain float64) Init {
	return func(rng *rand.Rand, shape []int) []float64 {
		in, out := fans(shape)
		return Gaussian(0, gain*math.Sqrt(2/float64(in+out)))(rng, shape)
	}
}

// fans returns the fan-in and fan-out of a parameter of the given shape, as
// gorgonia's Glorot initializers count them: a vector [n] as a column (1
// and n), a matrix [in, out]'s dimensions, and for a convolution filter
// [out, in, k...] the channels times the receptive field k₁·k₂·….
func fans(shape []int) (in, out int) {
	switch len(shape) {
	case 0:
		return 1, 1
	case 1:
		return 1, shape[0]
	case 2:
		return shape[0], shape[1]
	}
	field := size(shape[2:])
	return shape[1] * field, shape[0] * field
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
