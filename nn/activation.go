package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Activation is a layer's elementwise (or, for Softmax, last-axis) output
// function. It is an alias, so graph's activations and nn's are one type:
// nn.ReLU is graph.ReLU, and either is a LayerOption.
type Activation = graph.Activation

const (
	// Linear is the identity.
	Linear = graph.Linear
	// ReLU is max(x, 0).
	ReLU = graph.ReLU
	// Tanh is the hyperbolic tangent.
	Tanh = graph.Tanh
	// Sigmoid is 1/(1+exp(-x)).
	Sigmoid = graph.Sigmoid
	// GELU is the Gaussian error linear unit.
	GELU = graph.GELU
	// Softmax normalizes the last axis to probabilities.
	Softmax = graph.SoftmaxActivation
	// GELUTanh is GELU's tanh approximation (GPT-2's; Keras's
	// approximate=True, PyTorch's approximate="tanh").
	GELUTanh = graph.GELUTanh
	// SiLU is x·sigmoid(x) (swish).
	SiLU = graph.SiLU
)

// checkActivation panics with an error wrapping ErrUsage, naming who and
// act, unless act is one of the activations above (Softmax is graph's
// last): graph would refuse it only when the layer is called, as a shape
// error.
func checkActivation(who string, act Activation) {
	if act < Linear || act > Softmax {
		panic(usageError("%s: want an activation Linear..Softmax, got %v", who, act))
	}
}

// ActivationLayer applies an activation as a layer of its own (keras
// layers.Activation), for models that normalize between a layer and its
// nonlinearity. Create it with Activate.
type ActivationLayer struct {
	layerBase
	act Activation
}

// Activate returns a layer applying act (ReLU, GELU, Tanh, Sigmoid, Softmax
// or Linear), named activation, activation_1, ... unless Named. It panics on
// an unknown activation or an option other than Named.
func Activate(act Activation, opts ...LayerOption) *ActivationLayer {
	checkActivation("Activate", act)
	var c layerConfig
	c.apply("Activate", opts, "Named")
	if c.name == "" {
		c.name = strategy.UniqueName("activation")
	}
	return &ActivationLayer{layerBase: newBase(c.name), act: act}
}

// Activation returns the layer's activation.
func (a *ActivationLayer) Activation() Activation { return a.act }

// Call applies the activation to x. It panics with ErrUsage if x is nil.
func (a *ActivationLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	if x == nil {
		panic(usageError("%s: want an input tensor, got nil", a.name))
	}
	restore := graphOf(ctx, x).SetScope(a.name)
	defer restore()
	return a.act.Apply(x)
}

// Build does nothing: the layer has no variables.
func (a *ActivationLayer) Build([]int) {}

// Built reports true.
func (a *ActivationLayer) Built() bool { return true }

// OutputShape returns the input shape.
func (a *ActivationLayer) OutputShape(in []int) []int { return append([]int(nil), in...) }

// Variables returns nil.
func (a *ActivationLayer) Variables() []*Variable { return nil }

// TrainableVariables returns nil.
func (a *ActivationLayer) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (a *ActivationLayer) SetTrainable(t bool) { a.setTrainable(t) }
