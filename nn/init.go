package nn

// Initializer makes a weight's initial values from its name, which selects
// its random stream (so the values depend on the strategy's seed and the
// name alone), and its shape (keras.initializers).
type Initializer interface {
	Initial(name string, shape []int) []float64
}

// KernelInitializer sets how Dense, Embedding, PositionEmbedding and
// MultiHeadAttention initialize their kernels or tables instead of their
// defaults (Glorot uniform for kernels, uniform in ±0.05 for tables, as in
// Keras). It panics if init is nil.
func KernelInitializer(init Initializer) LayerOption {
	if init == nil {
		panic(usageError("KernelInitializer: want an Initializer, got nil"))
	}
	return option("KernelInitializer", func(c *layerConfig) { c.init = init }, init)
}

// RandomNormal draws from a normal distribution (keras RandomNormal,
// torch nn.init.normal_): a GPT's weights are RandomNormal{Stddev: 0.02}.
type RandomNormal struct {
	Mean, Stddev float64
}

// Initial implements Initializer.
func (r RandomNormal) Initial(name string, shape []int) []float64 {
	rng := initStream(name)
	vals := make([]float64, elements(shape))
	for i := range vals {
		vals[i] = r.Mean + r.Stddev*rng.NormFloat64()
	}
	return vals
}

// GlorotUniformInit is Glorot (Xavier) uniform, Keras's default kernel
// initializer, with Keras's fans: a kernel [..., in, out] has fanIn =
// in·r and fanOut = out·r, r the product of the leading axes (a
// convolution's window); a vector has both equal to its length.
type GlorotUniformInit struct{}

// Initial implements Initializer.
func (GlorotUniformInit) Initial(name string, shape []int) []float64 {
	fanIn, fanOut := 1, 1
	switch n := len(shape); n {
	case 0:
	case 1:
		fanIn, fanOut = shape[0], shape[0]
	default:
		r := elements(shape[:n-2])
		fanIn, fanOut = shape[n-2]*r, shape[n-1]*r
	}
	return glorot(name, elements(shape), fanIn, fanOut)
}

// elements is the product of shape's dimensions.
func elements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// initial returns init's values for weight name of the layer, or def's
// when init is nil.
func initial(init, def Initializer, name string, shape []int) []float64 {
	if init == nil {
		init = def
	}
	return init.Initial(name, shape)
}
