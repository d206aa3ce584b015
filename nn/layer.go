package nn

import (
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/gotrain/gotrain/strategy"
)

// Layer is one stage of a model. Call adds the layer's nodes to the replica's
// graph, creating its variables on the first call (Build) once the input
// shape is known.
type Layer interface {
	// Name is unique within the strategy the layer was created under.
	Name() string
	// Call returns the layer's output for x. training selects training
	// behaviour for layers that have one (dropout, batch norm).
	Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor
	// Build creates the variables for inputs of the given shape (batch axis
	// first, any size). Calling it again does nothing.
	Build(inputShape []int)
	// Built reports whether Build has run.
	Built() bool
	// OutputShape returns the output shape for an input shape.
	OutputShape(inputShape []int) []int
	// Variables returns the layer's variables, trainable or not.
	Variables() []*Variable
	// TrainableVariables returns the variables gradients should update.
	TrainableVariables() []*Variable
}

// initStream returns the random stream for a variable's initializer: a PCG
// seeded by the current strategy's seed (0 outside any scope) and the
// variable's name, so initial weights do not depend on replica count or on
// the order layers are built in.
func initStream(name string) *rand.Rand {
	var seed uint64
	if s := strategy.Current(); s != nil {
		seed = s.Seed()
	}
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// GlorotUniform returns fanIn·fanOut values drawn uniformly from ±√(6/(fanIn+fanOut))
// (Keras's default kernel initializer), from the stream for name.
func GlorotUniform(name string, fanIn, fanOut int) []float64 {
	limit := math.Sqrt(6 / float64(fanIn+fanOut))
	rng := initStream(name)
	w := make([]float64, fanIn*fanOut)
	for i := range w {
		w[i] = (2*rng.Float64() - 1) * limit
	}
	return w
}

func trainable(vs []*Variable) []*Variable {
	var out []*Variable
	for _, v := range vs {
		if v.Trainable() {
			out = append(out, v)
		}
	}
	return out
}

var (
	_ Layer     = (*DenseLayer)(nil)
	_ Layer     = (*Sequential)(nil)
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*Adam)(nil)
)
