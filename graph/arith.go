package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/gotrain/gotrain/internal/loops"
)

// The element-wise arithmetic ops; the binary ones broadcast (broadcast.go).
var (
	opAdd    = newOp()
	opSub    = newOp()
	opMul    = newOp()
	opDiv    = newOp()
	opScale  = newOp()
	opNeg    = newOp()
	opExp    = newOp()
	opLog    = newOp()
	opSquare = newOp()
	opSqrt   = newOp()
)

func init() {
	defineOps(map[opKind]opDef{
		opAdd:    {name: "add", cpu: cpu(addKernel, addKernel), grad: addGrad},
		opSub:    {name: "sub", cpu: cpu(subKernel, subKernel), grad: subGrad},
		opMul:    {name: "mul", cpu: cpu(mulKernel, mulKernel), grad: mulGrad},
		opDiv:    {name: "div", cpu: cpu(divKernel, divKernel), grad: divGrad},
		opScale:  {name: "scale", cpu: cpu(scaleKernel, scaleKernel), grad: scaleGrad},
		opNeg:    {name: "neg", cpu: cpu(negKernel, negKernel), grad: negGrad},
		opExp:    {name: "exp", cpu: cpu(expKernel, expKernel), grad: expGrad},
		opLog:    {name: "log", cpu: cpu(logKernel, logKernel), grad: logGrad},
		opSquare: {name: "square", cpu: cpu(squareKernel, squareKernel), grad: squareGrad},
		opSqrt:   {name: "sqrt", cpu: cpu(sqrtKernel, sqrtKernel), grad: sqrtGrad},
	})
}

func unary(op opKind, x *Node) *Node {
	g := graphOf(ops[op].name, x)
	return g.add(op, x.shape, x)
}

func binary(op opKind, a, b *Node) *Node {
	name := ops[op].name
	g := graphOf(name, a, b)
	shape := broadcastShape(g, name, a.shape, b.shape)
	out := g.add(op, shape, a, b)
	out.mode = bcastMode(a.shape, b.shape, shape)
	return out
}

// Add returns a + b elementwise, broadcasting a and b to a common shape
// (the package doc's Broadcasting section). Equal shapes, a scalar and a
// vector over the last axis take loops of their own.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Add(a, b *Node) *Node { return binary(opAdd, a, b) }

// AddSameShape returns a + b elementwise for a and b of one shape, without
// broadcasting: the join of a residual connection, x + f(x), where a branch
// that changed its input's shape is a mistake to report rather than a
// shape to stretch. Add broadcasts.
// It panics with an error wrapping ErrShape, naming both shapes, if the
// shapes differ.
func AddSameShape(a, b *Node) *Node {
	g := graphOf("add", a, b)
	if !slices.Equal(a.shape, b.shape) {
		panic(shapeErr(g, "add", fmt.Sprintf("want operands of one shape, got %v and %v", a.shape, b.shape)))
	}
	return binary(opAdd, a, b)
}

// Sub returns a - b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Sub(a, b *Node) *Node { return binary(opSub, a, b) }

// Mul returns a * b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Mul(a, b *Node) *Node { return binary(opMul, a, b) }

// Div returns a / b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Div(a, b *Node) *Node { return binary(opDiv, a, b) }

// Scale returns c·x.
func Scale(x *Node, c float64) *Node {
	out := unary(opScale, x)
	out.factor = c
	return out
}

// Neg returns -x.
func Neg(x *Node) *Node { return unary(opNeg, x) }

// Exp returns eˣ elementwise.
func Exp(x *Node) *Node { return unary(opExp, x) }

// Log returns the natural logarithm elementwise.
func Log(x *Node) *Node { return unary(opLog, x) }

// Square returns x² elementwise.
func Square(x *Node) *Node { return unary(opSquare, x) }

// Sqrt returns √x elementwise.
func Sqrt(x *Node) *Node { return unary(opSqrt, x) }

func addGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(dy, n.in[0].shape), reduceTo(dy, n.in[1].shape)}
}

func subGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(dy, n.in[0].shape), reduceTo(Neg(dy), n.in[1].shape)}
}

func mulGrad(n, dy *Node) []*Node {
	in := n.in
	return []*Node{reduceTo(Mul(dy, in[1]), in[0].shape), reduceTo(Mul(dy, in[0]), in[1].shape)}
}

func divGrad(n, dy *Node) []*Node {
	in := n.in
	// d(a/b)/db = -a/b² = -(a/b)/b
	return []*Node{reduceTo(Div(dy, in[1]), in[0].shape), reduceTo(Neg(Div(Mul(dy, n), in[1])), in[1].shape)}
}

func scaleGrad(n, dy *Node) []*Node { return []*Node{Scale(dy, n.factor)} }

func negGrad(_, dy *Node) []*Node { return []*Node{Neg(dy)} }

func expGrad(n, dy *Node) []*Node { return []*Node{Mul(dy, n)} }

func logGrad(n, dy *Node) []*Node { return []*Node{Div(dy, n.in[0])} }

func squareGrad(n, dy *Node) []*Node { return []*Node{Mul(dy, Scale(n.in[0], 2))} }

func sqrtGrad(n, dy *Node) []*Node { return []*Node{Div(Scale(dy, 0.5), n)} }

// addKernel, subKernel, mulKernel and divKernel run arithKernel's vector
// loops, which give f's bits.
func addKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpAdd, func(a, b T) T { return a + b })
}

func subKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpSub, func(a, b T) T { return a - b })
}

func mulKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpMul, func(a, b T) T { return a * b })
}

func divKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpDiv, func(a, b T) T { return a / b })
}

// binaryKernel returns the step computing out[e] = f(a[ia], b[ib]) for
// every element e, ia and ib the elements of a and b broadcast to e, f
// called per element.
func binaryKernel[T Float](n *Node, in [][]T, out []T, f func(a, b T) T) func() {
	a, b := in[0], in[1]
	it := newBcastIter(n.shape, n.in[0].shape, n.in[1].shape)
	return func() { binaryLoop(out, a, b, it, f, false, 0) }
}

func scaleKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], T(n.factor)
	return func() { loops.ScaleTo(out, c, x) }
}

func negKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = -v
		}
	}
}

func expKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Exp(float64(v)))
		}
	}
}

func logKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Log(float64(v)))
		}
	}
}

func squareKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = v * v
		}
	}
}

func sqrtKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Sqrt(float64(v)))
		}
	}
}

// arithKernel is binaryKernel for add, sub, mul or div (op), with the same
// bits through package loops' vector loops: a vector along the last axis
// takes loops.RowsOpTo or OpRowsTo, and binaryLoop sends equal runs to
// loops.OpTo and runs against one repeated element to a plain loop. Batch
// norm's ops (an activation against a per-channel vector, [N,H,W,C] with
// [C]) and bias adds take these paths every step.
func arithKernel[T Float](n *Node, in [][]T, out []T, op loops.Op, f func(a, b T) T) func() {
	a, b := in[0], in[1]
	switch n.mode {
	case bVecA:
		return func() { loops.OpRowsTo(op, out, a, b) }
	case bVecB:
		return func() { loops.RowsOpTo(op, out, a, b) }
	}
	it := newBcastIter(n.shape, n.in[0].shape, n.in[1].shape)
	return func() { binaryLoop(out, a, b, it, f, true, op) }
}

// binaryLoop is the loop of every binary element-wise op: out[e] =
// f(a[ia], b[ib]), ia and ib the elements of a and b broadcast to e, walked
// one run of the broadcast's innermost axis at a time (equal shapes are one
// run). With vec set, op is f in package loops: a run where both operands
// step by one takes loops.OpTo, and one where an operand repeats one element
// a plain loop of op (arithScalarA, arithScalarB); other runs call f per
// element.
func binaryLoop[T Float](out, a, b []T, it *bcastIter, f func(a, b T) T, vec bool, op loops.Op) {
	it.reset()
	n, sa := it.inner(0)
	_, sb := it.inner(1)
	for o := 0; o < len(out); o += n {
		ia, ib := it.offs[0], it.offs[1]
		row := out[o : o+n]
		switch {
		case vec && sa == 1 && sb == 1:
			loops.OpTo(op, row, a[ia:ia+n], b[ib:ib+n])
		case vec && sa == 1 && sb == 0:
			arithScalarB(op, row, a[ia:ia+n], b[ib])
		case vec && sa == 0 && sb == 1:
			arithScalarA(op, row, a[ia], b[ib:ib+n])
		default:
			for j := range row {
				row[j] = f(a[ia+j*sa], b[ib+j*sb])
			}
		}
		it.next()
	}
}

// arithScalarA is: for i, v := range b { dst[i] = s op v }.
func arithScalarA[T Float](op loops.Op, dst []T, s T, b []T) {
	dst = dst[:len(b)]
	switch op {
	case loops.OpAdd:
		for i, v := range b {
			dst[i] = s + v
		}
	case loops.OpSub:
		for i, v := range b {
			dst[i] = s - v
		}
	case loops.OpMul:
		loops.ScaleTo(dst, s, b)
	case loops.OpDiv:
		for i, v := range b {
			dst[i] = s / v
		}
	}
}

// arithScalarB is: for i, v := range a { dst[i] = v op s }.
func arithScalarB[T Float](op loops.Op, dst, a []T, s T) {
	dst = dst[:len(a)]
	switch op {
	case loops.OpAdd:
		for i, v := range a {
			dst[i] = v + s
		}
	case loops.OpSub:
		for i, v := range a {
			dst[i] = v - s
		}
	case loops.OpMul:
		loops.ScaleTo(dst, s, a) // s·v: the same bits as v·s
	case loops.OpDiv:
		for i, v := range a {
			dst[i] = v / s
		}
	}
}
