package graph

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/internal/loops"
)

// The activation op and its gradients, from the output y or the input x.
var (
	opActivate = newOp()
	opActGradY = newOp() // dz from the activation's output y and dy
	opActGradX = newOp() // dz from the activation's input x and dy (GELU)
)

func init() {
	defineOps(map[opKind]opDef{
		opActivate: {name: "activate", cpu: cpu(activateKernel, activateKernel), grad: activateGrad},
		opActGradY: {name: "activate_grad", cpu: cpu(actGradYKernel, actGradYKernel), backward: true},
		opActGradX: {name: "activate_grad", cpu: cpu(actGradXKernel, actGradXKernel), backward: true},
	})
}

// Activation selects the output function of Dense, Conv2D, BatchNorm and
// Activate: elementwise, or for SoftmaxActivation over the last axis.
type Activation int

// The activations. GELU is the exact form x·Φ(x) (PyTorch's default, Keras
// approximate=False); GELUTanh is its tanh approximation
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (GPT-2's, PyTorch's
// approximate="tanh"); SiLU is x·sigmoid(x) (swish); SoftmaxActivation is
// Softmax, which normalizes a whole row and so is never fused into a
// kernel: it follows the product (or convolution, or normalization) as a
// node of its own. Its name keeps Softmax for the function.
const (
	Linear Activation = iota
	ReLU
	Tanh
	Sigmoid
	GELU
	GELUTanh
	SiLU
	SoftmaxActivation
	numActivations
)

var actNames = [numActivations]string{"linear", "relu", "tanh", "sigmoid", "gelu", "gelu_tanh", "silu", "softmax"}

// String returns the activation's lowercase name, e.g. "relu".
func (a Activation) String() string {
	if a >= 0 && a < numActivations {
		return actNames[a]
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// Apply returns act applied elementwise to x, of any rank: the standalone
// form of Activate, so that act.Apply is a func(*Node) *Node (ReLU.Apply,
// GELUTanh.Apply, SiLU.Apply, ...). Linear returns x; SoftmaxActivation
// returns Softmax(x).
// It panics with an error wrapping ErrShape if act is unknown.
func (act Activation) Apply(x *Node) *Node { return Activate(x, act) }

// needsInput reports whether act's derivative is computed from its input
// (opActGradX) rather than its output (opActGradY).
func (act Activation) needsInput() bool { return act == GELU || act == GELUTanh || act == SiLU }

// unfused reports whether Dense keeps act as a node of its own after the
// product: an activation whose derivative needs its input (needsInput), or
// the softmax, which spans a row.
func (act Activation) unfused() bool { return act.needsInput() || act == SoftmaxActivation }

func checkAct(g *Graph, op string, act Activation) {
	if act < 0 || act >= numActivations {
		panic(g.err(op, fmt.Sprintf("want an activation Linear..SoftmaxActivation, got %v", act), ErrShape))
	}
}

// Activate applies act elementwise; SoftmaxActivation is Softmax(x), over
// the last axis.
// It panics with an error wrapping ErrShape if act is unknown, or if act is
// SoftmaxActivation and x is a scalar.
func Activate(x *Node, act Activation) *Node {
	g := graphOf("activate", x)
	checkAct(g, "activate", act)
	switch act {
	case Linear:
		return x
	case SoftmaxActivation:
		return Softmax(x)
	}
	out := g.add(opActivate, x.shape, x)
	out.act = act
	return out
}

func activateGrad(n, dy *Node) []*Node {
	var dz *Node
	if n.act.needsInput() {
		dz = n.g.add(opActGradX, n.shape, n.in[0], dy)
	} else {
		dz = n.g.add(opActGradY, n.shape, n, dy)
	}
	dz.act = n.act
	return []*Node{dz}
}

func activateKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, act := in[0], n.act
	return func() { activate(out, x, act) }
}

func actGradYKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, act := in[0], in[1], n.act
	return func() { actGradY(out, y, dy, act) }
}

func actGradXKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dy, act := in[0], in[1], n.act
	return func() { actGradX(out, x, dy, act) }
}

func sigmoid[T Float](x T) T {
	if x >= 0 {
		return T(1 / (1 + math.Exp(-float64(x))))
	}
	e := math.Exp(float64(x))
	return T(e / (1 + e))
}

// biasAct is: for each row r, out[r,j] = act(out[r,j] + b[j]) (b nil: no bias).
// Both happen in one pass over the output, after the matrix product.
func biasAct[T Float](out, b []T, n int, act Activation) {
	switch {
	case b == nil && act == Linear:
		return
	case b == nil:
		activate(out, out, act)
		return
	}
	if n == 0 {
		return
	}
	b = b[:n]
	for r := 0; r+n <= len(out); r += n {
		row := out[r : r+n]
		switch {
		case act == ReLU && n >= vectorMin:
			loops.AddReLU(row, row, b)
		case act == ReLU:
			// The builtin max compiles without a branch; a data-dependent
			// branch mispredicts on about half the elements.
			for j, v := range row {
				row[j] = max(v+b[j], 0)
			}
		case n >= vectorMin:
			loops.AddTo(row, row, b)
		default:
			for j, v := range row {
				row[j] = v + b[j]
			}
		}
		if act != ReLU && act != Linear {
			activate(row, row, act)
		}
	}
}

// activate is: out[i] = act(x[i]). SoftmaxActivation never reaches it:
// Activate and Dense make it a Softmax node.
func activate[T Float](out, x []T, act Activation) {
	switch act {
	case Linear:
		copy(out, x)
	case ReLU:
		for i, v := range x {
			out[i] = max(v, 0)
		}
	case Tanh:
		for i, v := range x {
			out[i] = T(math.Tanh(float64(v)))
		}
	case Sigmoid:
		for i, v := range x {
			out[i] = sigmoid(v)
		}
	case GELU:
		loops.GELU(out, x)
	case GELUTanh:
		for i, v := range x {
			out[i] = T(geluTanh(float64(v)))
		}
	case SiLU:
		for i, v := range x {
			out[i] = T(silu(float64(v)))
		}
	}
}

// actGradY is: out[i] = dy[i] · act'(z[i]) written in terms of y[i] = act(z[i]).
func actGradY[T Float](out, y, dy []T, act Activation) {
	switch act {
	case Linear:
		copy(out, dy)
	case ReLU:
		loops.ReLUGrad(out, y, dy)
	case Tanh:
		for i, v := range y {
			out[i] = dy[i] * (1 - v*v)
		}
	case Sigmoid:
		for i, v := range y {
			out[i] = dy[i] * v * (1 - v)
		}
	}
}

// actGradX is: out[i] = dy[i] · act'(x[i]) for the activations whose
// derivative needs their input (Activation.needsInput); the others'
// derivatives follow from their outputs (actGradY).
func actGradX[T Float](out, x, dy []T, act Activation) {
	var d func(float64) float64
	switch act {
	case GELU:
		loops.GELUGrad(out, x, dy)
		return
	case GELUTanh:
		d = geluTanhGrad
	case SiLU:
		d = siluGrad
	}
	for i, v := range x {
		out[i] = dy[i] * T(d(float64(v)))
	}
}

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
