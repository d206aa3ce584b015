package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
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
)

var activationNames = [...]string{"linear", "relu", "tanh", "sigmoid", "gelu", "softmax"}

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
