package graph

import (
	"fmt"
	"slices"
)

// The broadcasting ops: a value stretched to a shape, and its adjoint sum.
var (
	opBroadcastScalar = newOp() // scalar to shape, times factor
	opBroadcastAxis   = newOp() // insert axis, times factor
	opSumTo           = newOp() // factor·Σ of x over the axes its output shape broadcasts along
	opBroadcastTo     = newOp() // factor·x stretched to the output shape
)

func init() {
	defineOps(map[opKind]opDef{
		opBroadcastScalar: {name: "broadcast", cpu: cpu(broadcastScalarKernel, broadcastScalarKernel), grad: broadcastScalarGrad},
		opBroadcastAxis:   {name: "broadcast_axis", cpu: cpu(broadcastAxisKernel, broadcastAxisKernel), grad: broadcastAxisGrad},
		opSumTo:           {name: "sum_axes", cpu: cpu(sumToKernel, sumToKernel), grad: sumToGrad},
		opBroadcastTo:     {name: "broadcast_to", cpu: cpu(broadcastToKernel, broadcastToKernel), grad: broadcastToGrad},
	})
}

// broadcastShape returns the shape a and b broadcast to, by the rule in the
// package doc: aligned from the right, each pair of dimensions equal or one
// of them 1, the missing leading axes of the shorter shape taken as 1.
// It panics with an error wrapping ErrShape, naming op and both shapes, if
// they do not broadcast.
func broadcastShape(g *Graph, op string, a, b []int) []int {
	out, ok := tryBroadcast(a, b)
	if !ok {
		panic(shapeErr(g, op, fmt.Sprintf("want shapes that broadcast, got %v and %v", a, b)))
	}
	return out
}

// tryBroadcast returns the shape a and b broadcast to, and false if they
// do not.
func tryBroadcast(a, b []int) ([]int, bool) {
	if slices.Equal(a, b) {
		return a, true
	}
	out := make([]int, max(len(a), len(b)))
	for i := range out {
		da, db := dimFromRight(a, len(out)-1-i), dimFromRight(b, len(out)-1-i)
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// dimFromRight returns shape's k-th dimension counted from the last (k = 0),
// 1 past its first.
func dimFromRight(shape []int, k int) int {
	if k >= len(shape) {
		return 1
	}
	return shape[len(shape)-1-k]
}

// bcast is how the operands of a binary elementwise op line up.
type bcast int

const (
	bSame    bcast = iota // equal shapes
	bScalarA              // a has one element
	bScalarB              // b has one element
	bVecA                 // a is a vector over the trailing axis of b
	bVecB                 // b is a vector over the trailing axis of a
	bGeneral              // any other shapes that broadcast (broadcast.go)
)

// bcastMode picks the loop of a binary op whose operands a and b broadcast
// to out: the modes other than bGeneral keep the layouts that need no index
// arithmetic (equal shapes, a scalar, a vector over the last axis) on the
// loops they had before general broadcasting.
func bcastMode(a, b, out []int) bcast {
	switch {
	case slices.Equal(a, b):
		return bSame
	case slices.Equal(out, a) && sizeOf(b) == 1:
		return bScalarB
	case slices.Equal(out, b) && sizeOf(a) == 1:
		return bScalarA
	case slices.Equal(out, a) && lastAxisOnly(b, out):
		return bVecB
	case slices.Equal(out, b) && lastAxisOnly(a, out):
		return bVecA
	}
	return bGeneral
}

// sizeOf returns the number of elements of shape.
func sizeOf(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// lastAxisOnly reports whether v's elements lie along out's last axis: v
// matches that axis and its other dimensions are 1.
func lastAxisOnly(v, out []int) bool {
	if len(v) == 0 || len(out) < 2 || v[len(v)-1] != out[len(out)-1] {
		return false
	}
	for _, d := range v[:len(v)-1] {
		if d != 1 {
			return false
		}
	}
	return true
}

// bcastDims returns the index space of a broadcast to shape, for operands
// whose shapes broadcast to it: dims is shape without its size-1 axes,
// adjacent axes merged wherever every operand steps across them as across
// one (so equal shapes give one axis), and strides[k][i] is operand k's step
// in elements along dims[i], 0 where it is broadcast. A shape of one
// element gives dims [1] and zero strides. CPU loops (bcastIter) and CUDA
// kernels share it, so they visit elements alike.
func bcastDims(shape []int, operands ...[]int) (dims []int, strides [][]int) {
	r := len(shape)
	full := make([][]int, len(operands))
	for k, s := range operands {
		st := make([]int, r)
		step := 1
		for i := r - 1; i >= r-len(s); i-- {
			if d := s[i-(r-len(s))]; d != 1 {
				st[i] = step
				step *= d
			}
		}
		full[k] = st
	}
	strides = make([][]int, len(operands))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if n := len(dims); n > 0 && mergeable(strides, full, n-1, i, d) {
			dims[n-1] *= d
			for k := range strides {
				strides[k][n-1] = full[k][i]
			}
			continue
		}
		dims = append(dims, d)
		for k := range strides {
			strides[k] = append(strides[k], full[k][i])
		}
	}
	if len(dims) == 0 {
		dims = []int{1}
		for k := range strides {
			strides[k] = []int{0}
		}
	}
	return dims, strides
}

// mergeable reports whether axis i of size d can join merged axis j: every
// operand steps across the whole of i once per step along j.
func mergeable(strides, full [][]int, j, i, d int) bool {
	for k := range strides {
		if strides[k][j] != full[k][i]*d {
			return false
		}
	}
	return true
}

// bcastIter walks a bcastDims index space one run of its innermost axis at
// a time, keeping each operand's offset. Its state is made at compile time,
// so a step's loop allocates nothing; a Program runs on one goroutine.
type bcastIter struct {
	dims    []int
	strides [][]int
	idx     []int // position along each axis but the last
	offs    []int // each operand's offset at the current run
}

func newBcastIter(shape []int, operands ...[]int) *bcastIter {
	dims, strides := bcastDims(shape, operands...)
	return &bcastIter{dims: dims, strides: strides, idx: make([]int, len(dims)), offs: make([]int, len(operands))}
}

// inner returns the length of a run and operand k's step along it.
func (it *bcastIter) inner(k int) (n, step int) {
	last := len(it.dims) - 1
	return it.dims[last], it.strides[k][last]
}

func (it *bcastIter) reset() {
	clear(it.idx)
	clear(it.offs)
}

// next moves to the next run, in row-major order.
func (it *bcastIter) next() {
	for d := len(it.dims) - 2; d >= 0; d-- {
		it.idx[d]++
		for k, s := range it.strides {
			it.offs[k] += s[d]
		}
		if it.idx[d] < it.dims[d] {
			return
		}
		for k, s := range it.strides {
			it.offs[k] -= s[d] * it.dims[d]
		}
		it.idx[d] = 0
	}
}

func broadcastScalar(dy *Node, shape []int, factor float64) *Node {
	out := dy.g.add(opBroadcastScalar, shape, dy)
	out.factor = factor
	return out
}

func broadcastAxis(dy *Node, shape []int, axis int, factor float64) *Node {
	out := dy.g.add(opBroadcastAxis, shape, dy)
	out.axis = axis
	out.factor = factor
	return out
}

// reduceTo sums dy, shaped like a broadcast result, back to shape, the
// shape of an operand that was broadcast. Scalars and vectors over the
// last axis keep the reductions they had before general broadcasting.
func reduceTo(dy *Node, shape []int) *Node {
	switch n := sizeOf(shape); {
	case slices.Equal(dy.shape, shape):
		return dy
	case n == 1 && len(shape) <= 1:
		s := Sum(dy)
		if len(shape) == 1 {
			return Reshape(s, 1)
		}
		return s
	case len(shape) == 1 && len(dy.shape) >= 2 && dy.shape[len(dy.shape)-1] == shape[0]:
		return SumAxis(Reshape(dy, dy.size/shape[0], shape[0]), 0)
	}
	return sumTo(dy, shape, 1)
}

// sumTo returns factor·Σ of x over the axes along which shape broadcasts to
// x's shape: shape is x's with some dimensions 1 or leading axes missing.
func sumTo(x *Node, shape []int, factor float64) *Node {
	out := x.g.add(opSumTo, shape, x)
	out.factor = factor
	return out
}

// broadcastTo returns factor·x stretched to shape, which x's shape
// broadcasts to.
func broadcastTo(x *Node, shape []int, factor float64) *Node {
	out := x.g.add(opBroadcastTo, shape, x)
	out.factor = factor
	return out
}

func broadcastScalarGrad(n, dy *Node) []*Node {
	return []*Node{reduceTo(Scale(Sum(dy), n.factor), n.in[0].shape)}
}

func broadcastAxisGrad(n, dy *Node) []*Node {
	return []*Node{Scale(SumAxis(dy, n.axis), n.factor)}
}

func sumToGrad(n, dy *Node) []*Node { return []*Node{broadcastTo(dy, n.in[0].shape, n.factor)} }

func broadcastToGrad(n, dy *Node) []*Node { return []*Node{sumTo(dy, n.in[0].shape, n.factor)} }

func broadcastScalarKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, f := in[0], n.factor
	return func() { fill(out, T(float64(x[0])*f)) }
}

func broadcastAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.shape, n.axis)
	f := T(n.factor)
	return func() { broadcastAxisLoop(out, x, outer, d, inner, f) }
}

// broadcastAxisLoop is: out[o,k,i] = f · x[o,i].
func broadcastAxisLoop[T Float](out, x []T, outer, d, inner int, f T) {
	for o := 0; o < outer; o++ {
		src := x[o*inner : (o+1)*inner]
		for k := 0; k < d; k++ {
			dst := out[(o*d+k)*inner : (o*d+k+1)*inner]
			for i, v := range src {
				dst[i] = f * v
			}
		}
	}
}

// sumToKernel is: out[j] = T(factor · Σ x[i]) over the elements i of x that
// broadcast from out[j], accumulated in float64 in increasing i.
func sumToKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, f := in[0], n.factor
	it := newBcastIter(n.in[0].shape, n.shape)
	acc := make([]float64, len(out))
	return func() {
		clear(acc)
		it.reset()
		m, so := it.inner(0)
		for i := 0; i < len(x); i += m {
			o, run := it.offs[0], x[i:i+m]
			if so == 0 {
				s := acc[o]
				for _, v := range run {
					s += float64(v)
				}
				acc[o] = s
			} else {
				for j, v := range run {
					acc[o+j] += float64(v)
				}
			}
			it.next()
		}
		for j, s := range acc {
			out[j] = T(s * f)
		}
	}
}

// broadcastToKernel is: out[e] = T(factor) · x[i], i the element of x
// broadcast to e.
func broadcastToKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, f := in[0], T(n.factor)
	it := newBcastIter(n.shape, n.in[0].shape)
	return func() {
		it.reset()
		m, sx := it.inner(0)
		for o := 0; o < len(out); o += m {
			ix, row := it.offs[0], out[o:o+m]
			for j := range row {
				row[j] = f * x[ix+j*sx]
			}
			it.next()
		}
	}
}
