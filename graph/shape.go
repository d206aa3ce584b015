package graph

import (
	"fmt"
	"slices"
)

// The shape ops: Reshape and StopGradient share their input's buffer;
// Transpose, Slice, Concat, Split and Stack move elements without
// arithmetic, so their device kernels give the CPU's bits.
var (
	opReshape      = newOp()
	opStopGradient = newOp()
	opTranspose    = newOp() // axes permuted (perm)
	opSlice        = newOp() // [from, from+d) along axis
	opSliceGrad    = newOp() // Slice's gradient: dy placed at from along axis, zeros elsewhere
	opConcat       = newOp() // inputs joined along axis
)

func init() {
	defineOps(map[opKind]opDef{
		opReshape:      {name: "reshape", buf: bufAlias, grad: reshapeGrad},
		opStopGradient: {name: "stop_gradient", buf: bufAlias, stopsGradient: true},
		opTranspose:    {name: "transpose", cpu: cpu(transposeKernel, transposeKernel), grad: transposeGrad},
		opSlice:        {name: "slice", cpu: cpu(sliceKernel, sliceKernel), grad: sliceGrad},
		opSliceGrad:    {name: "slice_grad", cpu: cpu(sliceGradKernel, sliceGradKernel), grad: sliceGradGrad},
		opConcat:       {name: "concat", cpu: cpu(concatKernel, concatKernel), grad: concatGrad},
	})
}

// Reshape returns x with a new shape of the same number of elements. One
// dimension may be -1, inferred from the others. The result shares x's
// buffer.
// It panics with an error wrapping ErrShape if the sizes differ.
func Reshape(x *Node, shape ...int) *Node {
	g := graphOf("reshape", x)
	shape = slices.Clone(shape)
	infer, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			panic(shapeErr(g, "reshape", fmt.Sprintf("want non-negative dimensions and at most one -1, got %v", shape)))
		default:
			known *= d
		}
	}
	if infer >= 0 && known > 0 && x.size%known == 0 {
		shape[infer] = x.size / known
		known = x.size
	}
	if known != x.size || (infer >= 0 && shape[infer] < 0) {
		panic(shapeErr(g, "reshape", fmt.Sprintf("want %d elements, got shape %v for %v", x.size, shape, x.shape)))
	}
	if slices.Equal(shape, x.shape) {
		return x
	}
	return g.add(opReshape, shape, x)
}

// StopGradient returns x unchanged in the forward pass and blocks gradients
// from flowing back through it. The result shares x's buffer.
func StopGradient(x *Node) *Node {
	g := graphOf("stop_gradient", x)
	return g.add(opStopGradient, x.shape, x)
}

// Transpose returns x with its axes permuted: output axis i is input axis
// perm[i], as numpy.transpose. With no perm it reverses the axes. A
// permutation that keeps the order of the axes longer than 1 is a Reshape
// (it shares x's buffer); any other copies, once per element.
// It panics with an error wrapping ErrShape if perm is not a permutation of
// x's axes.
func Transpose(x *Node, perm ...int) *Node {
	const op = "transpose"
	g := graphOf(op, x)
	r := len(x.shape)
	if len(perm) == 0 {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	perm = slices.Clone(perm)
	seen := make([]bool, r)
	ok := len(perm) == r
	for _, p := range perm {
		if !ok || p < 0 || p >= r || seen[p] {
			ok = false
			break
		}
		seen[p] = true
	}
	if !ok {
		panic(shapeErr(g, op, fmt.Sprintf("want a permutation of the %d axes of %v, got %v", r, x.shape, perm)))
	}
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = x.shape[p]
	}
	if dims, _ := transposePlan(x.shape, perm); len(dims) <= 1 {
		// Only axes of length 1 move: the elements keep their order.
		return Reshape(x, shape...)
	}
	out := g.add(opTranspose, shape, x)
	out.perm = perm
	return out
}

// transposePlan reduces a transpose of shape by perm to output dimensions
// and, per output dimension, the stride of its input axis in elements:
// axes of length 1 are dropped and output axes that are adjacent in the
// input merge into one, so the kernels loop over as few axes as there are.
func transposePlan(shape, perm []int) (dims, strides []int) {
	in := make([]int, len(shape))
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		in[i] = s
		s *= shape[i]
	}
	for _, p := range perm {
		d := shape[p]
		if d == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 && strides[k] == in[p]*d {
			dims[k] *= d
			strides[k] = in[p]
			continue
		}
		dims = append(dims, d)
		strides = append(strides, in[p])
	}
	return dims, strides
}

// Slice returns the elements of x whose index along axis is in [from, to):
// x's shape with that axis to-from long. A negative axis counts from the
// end. Its gradient places dy back among zeros.
// It panics with an error wrapping ErrShape if the axis is out of range or
// not 0 ≤ from ≤ to ≤ the axis's length.
func Slice(x *Node, axis, from, to int) *Node {
	const op = "slice"
	g, axis := normAxis(op, x, axis)
	if d := x.shape[axis]; from < 0 || from > to || to > d {
		panic(shapeErr(g, op, fmt.Sprintf("want 0 ≤ from ≤ to ≤ %d, got [%d, %d) along axis %d of %v", d, from, to, axis, x.shape)))
	}
	if from == 0 && to == x.shape[axis] {
		return x
	}
	shape := slices.Clone(x.shape)
	shape[axis] = to - from
	return slice(g, x, shape, axis, from)
}

func slice(g *Graph, x *Node, shape []int, axis, from int) *Node {
	out := g.add(opSlice, shape, x)
	out.axis, out.from = axis, from
	return out
}

// Concat returns xs joined along axis, in order: their shapes must be
// equal except along axis, where the result's length is the sum of
// theirs. A negative axis counts from the end. One input is returned as
// is.
// It panics with an error wrapping ErrShape if xs is empty, the axis is
// out of range or two shapes differ elsewhere.
func Concat(axis int, xs ...*Node) *Node {
	const op = "concat"
	if len(xs) == 0 {
		panic(&Error{Op: op, Msg: "want at least one node, got none", Err: ErrShape})
	}
	graphOf(op, xs...)
	g, axis := normAxis(op, xs[0], axis)
	shape := slices.Clone(xs[0].shape)
	for _, x := range xs[1:] {
		if !equalExcept(x.shape, xs[0].shape, axis) {
			panic(shapeErr(g, op, fmt.Sprintf("want shapes equal except along axis %d, got %v and %v", axis, xs[0].shape, x.shape)))
		}
		shape[axis] += x.shape[axis]
	}
	if len(xs) == 1 {
		return xs[0]
	}
	out := g.add(opConcat, shape, slices.Clone(xs)...)
	out.axis = axis
	return out
}

func equalExcept(a, b []int, axis int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if i != axis && a[i] != b[i] {
			return false
		}
	}
	return true
}

// Split returns the consecutive slices of x along axis with the given
// lengths, which must add up to the axis's length; Concat(axis, Split(x,
// axis, sizes...)...) is x. A negative axis counts from the end.
// It panics with an error wrapping ErrShape if no size is given, a size is
// negative, the sizes do not add up or the axis is out of range.
func Split(x *Node, axis int, sizes ...int) []*Node {
	const op = "split"
	g, axis := normAxis(op, x, axis)
	sum, ok := 0, len(sizes) > 0
	for _, s := range sizes {
		ok = ok && s >= 0
		sum += s
	}
	if !ok || sum != x.shape[axis] {
		panic(shapeErr(g, op, fmt.Sprintf("want non-negative sizes adding up to %d along axis %d of %v, got %v", x.shape[axis], axis, x.shape, sizes)))
	}
	out := make([]*Node, len(sizes))
	from := 0
	for i, s := range sizes {
		out[i] = Slice(x, axis, from, from+s)
		from += s
	}
	return out
}

// Stack returns xs, all of one shape, stacked along a new axis at
// position axis of the result (0 ≤ axis ≤ rank; a negative axis counts
// from the end of the result's axes): Stack(0, a, b) of two [3] vectors is
// [2 3].
// It panics with an error wrapping ErrShape if xs is empty, two shapes
// differ or the axis is out of range.
func Stack(axis int, xs ...*Node) *Node {
	const op = "stack"
	if len(xs) == 0 {
		panic(&Error{Op: op, Msg: "want at least one node, got none", Err: ErrShape})
	}
	g := graphOf(op, xs...)
	r := len(xs[0].shape)
	if axis < 0 {
		axis += r + 1
	}
	if axis < 0 || axis > r {
		panic(shapeErr(g, op, fmt.Sprintf("want axis in [-%d,%d], got %d for shape %v", r+1, r, axis, xs[0].shape)))
	}
	shape := slices.Insert(slices.Clone(xs[0].shape), axis, 1)
	parts := make([]*Node, len(xs))
	for i, x := range xs {
		if !slices.Equal(x.shape, xs[0].shape) {
			panic(shapeErr(g, op, fmt.Sprintf("want equal shapes, got %v and %v", xs[0].shape, x.shape)))
		}
		parts[i] = Reshape(x, shape...)
	}
	return Concat(axis, parts...)
}

// sameOpParams compares the parameters of the shape, normalization and
// attention ops (perm, from, norm, causal), for Node.same.
func (a *Node) sameOpParams(b *Node) bool {
	return slices.Equal(a.perm, b.perm) && a.from == b.from && a.causal == b.causal &&
		(a.norm == nil) == (b.norm == nil) && (a.norm == nil || *a.norm == *b.norm)
}

func reshapeGrad(n, dy *Node) []*Node { return []*Node{Reshape(dy, n.in[0].shape...)} }

func transposeGrad(n, dy *Node) []*Node {
	inv := make([]int, len(n.perm))
	for i, p := range n.perm {
		inv[p] = i
	}
	return []*Node{Transpose(dy, inv...)}
}

func sliceGrad(n, dy *Node) []*Node {
	d := n.g.add(opSliceGrad, n.in[0].shape, dy)
	d.axis, d.from = n.axis, n.from
	return []*Node{d}
}

// sliceGradGrad: placing dy among zeros is linear, and its adjoint takes
// the slice back.
func sliceGradGrad(n, dy *Node) []*Node {
	return []*Node{slice(n.g, dy, n.in[0].shape, n.axis, n.from)}
}

func concatGrad(n, dy *Node) []*Node {
	out := make([]*Node, len(n.in))
	from := 0
	for i, x := range n.in {
		out[i] = slice(n.g, dy, x.shape, n.axis, from)
		from += x.shape[n.axis]
	}
	return out
}

func transposeKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	dims, strides := transposePlan(n.in[0].shape, n.perm)
	idx := make([]int, len(dims))
	return func() { transpose(out, x, dims, strides, idx) }
}

// transpose is: out[i₀,…,iᵣ₋₁] = x[Σ iₖ·strides[k]] over dims, row-major;
// idx is scratch of len(dims).
func transpose[T Float](out, x []T, dims, strides, idx []int) {
	r := len(dims)
	if r == 0 {
		copy(out, x)
		return
	}
	last, ls := dims[r-1], strides[r-1]
	clear(idx)
	base := 0
	for o := 0; o < len(out); o += last {
		dst := out[o : o+last]
		if ls == 1 {
			copy(dst, x[base:base+last])
		} else {
			for j := range dst {
				dst[j] = x[base+j*ls]
			}
		}
		// Advance the outer axes like an odometer, keeping base in step.
		for k := r - 2; k >= 0; k-- {
			idx[k]++
			base += strides[k]
			if idx[k] < dims[k] {
				break
			}
			base -= idx[k] * strides[k]
			idx[k] = 0
		}
	}
}

func sliceKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.shape, n.axis)
	ds, from := n.in[0].shape[n.axis], n.from
	return func() { axisCopy(out, x, outer, d, inner, ds, from, d, 0) }
}

func sliceGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	dy := in[0]
	outer, dd, inner := axisSplit(n.shape, n.axis)
	d, from := n.in[0].shape[n.axis], n.from
	return func() {
		clear(out)
		axisCopy(out, dy, outer, d, inner, d, 0, dd, from)
	}
}

func concatKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	outer, dd, inner := axisSplit(n.shape, n.axis)
	return func() {
		from := 0
		for i, x := range in {
			d := n.in[i].shape[n.axis]
			axisCopy(out, x, outer, d, inner, d, 0, dd, from)
			from += d
		}
	}
}

// axisCopy is: dst[o, fd+k, i] = src[o, fs+k, i] for k < d, where src's
// axis is ds long and dst's dd, both with outer and inner elements around.
func axisCopy[T Float](dst, src []T, outer, d, inner, ds, fs, dd, fd int) {
	w := d * inner
	if w == 0 {
		return
	}
	for o := 0; o < outer; o++ {
		copy(dst[(o*dd+fd)*inner:][:w], src[(o*ds+fs)*inner:][:w])
	}
}

func normAxis(op string, x *Node, axis int) (*Graph, int) {
	g := graphOf(op, x)
	r, ax := len(x.shape), axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r {
		panic(shapeErr(g, op, fmt.Sprintf("want axis in [-%d,%d), got %d for shape %v", r, r, axis, x.shape)))
	}
	return g, ax
}

func axisSplit(shape []int, axis int) (outer, d, inner int) {
	outer, inner = 1, 1
	for _, s := range shape[:axis] {
		outer *= s
	}
	for _, s := range shape[axis+1:] {
		inner *= s
	}
	return outer, shape[axis], inner
}
