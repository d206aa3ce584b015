package graph

import "math"

// Apply returns act applied elementwise to x, of any rank: the standalone
// form of Activate, so that act.Apply is a func(*Node) *Node (ReLU.Apply,
// GELUTanh.Apply, SiLU.Apply, ...). Linear returns x.
// It panics with an error wrapping ErrShape if act is unknown.
func (act Activation) Apply(x *Node) *Node { return Activate(x, act) }

// needsInput reports whether act's derivative is computed from its input
// (opActGradX) rather than its output (opActGradY): Dense keeps such an
// activation as a node of its own after the product.
func (act Activation) needsInput() bool { return act == GELU || act == GELUTanh || act == SiLU }

// geluTanhC is √(2/π), the scale inside GELUTanh's tanh.
const geluTanhC = 0.7978845608028654

// geluTanh is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
// Keep in sync with gelu_tanh_d in kernels_cuda.go.
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(geluTanhC*(x+0.044715*x*x*x)))
}

// geluTanhGrad is geluTanh's derivative:
// 0.5·(1 + t) + 0.5·x·(1 - t²)·√(2/π)·(1 + 3·0.044715·x²), t the tanh.
func geluTanhGrad(x float64) float64 {
	t := math.Tanh(geluTanhC * (x + 0.044715*x*x*x))
	return 0.5*(1+t) + 0.5*x*(1-t*t)*geluTanhC*(1+3*0.044715*x*x)
}

// silu is x·sigmoid(x), the sigmoid computed without overflow as sigmoid
// does. Keep in sync with silu_d in kernels_cuda.go.
func silu(x float64) float64 { return x * sigmoid(x) }

// siluGrad is silu's derivative s·(1 + x·(1 - s)), s = sigmoid(x).
func siluGrad(x float64) float64 {
	s := sigmoid(x)
	return s * (1 + x*(1-s))
}
