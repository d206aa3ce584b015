package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Activation is a layer's elementwise (or, for Softmax, last-axis) output
// function.
type Activation int

const (
	// Linear is the identity.
	Linear Activation = iota
	// ReLU is max(x, 0).
	ReLU
	// Tanh is the hyperbolic tangent.
	Tanh
	// Sigmoid is 1/(1+exp(-x)).
	Sigmoid
	// GELU is the Gaussian error linear unit.
	GELU
	// Softmax normalizes the last axis to probabilities.
	Softmax
	// GELUTanh is GELU's tanh approximation (GPT-2's; Keras's
	// approximate=True, PyTorch's approximate="tanh").
	GELUTanh
	// SiLU is x·sigmoid(x) (swish).
	SiLU
)

var activationNames = [...]string{"linear", "relu", "tanh", "sigmoid", "gelu", "softmax", "gelu_tanh", "silu"}

func (a Activation) String() string {
	if a >= 0 && int(a) < len(activationNames) {
		return activationNames[a]
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// fused returns the graph activation Dense can fuse, and whether a softmax
// must follow.
func (a Activation) fused() (graph.Activation, bool) {
	switch a {
	case Linear:
		return graph.Linear, false
	case ReLU:
		return graph.ReLU, false
	case Tanh:
		return graph.Tanh, false
	case Sigmoid:
		return graph.Sigmoid, false
	case GELU:
		return graph.GELU, false
	case Softmax:
		return graph.Linear, true
	case GELUTanh:
		return graph.GELUTanh, false
	case SiLU:
		return graph.SiLU, false
	}
	panic(usageError("unknown activation %d", int(a)))
}

// Apply applies the activation to x.
func (a Activation) Apply(x *Tensor) *Tensor {
	ga, softmax := a.fused()
	if softmax {
		return graph.Softmax(x)
	}
	if ga == graph.Linear {
		return x
	}
	return graph.Activate(x, ga)
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
	act.fused() // panics on an unknown activation
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
