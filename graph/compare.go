package graph

import "fmt"

// The element-wise extremes, comparisons and selection, broadcasting.
var (
	opMaxElem      = newOp() // max(a, b), broadcasting
	opMinElem      = newOp() // min(a, b), broadcasting
	opGreater      = newOp() // a > b as 0 or 1, broadcasting
	opGreaterEqual = newOp() // a >= b
	opLess         = newOp() // a < b
	opLessEqual    = newOp() // a <= b
	opEqual        = newOp() // a == b
	opWhere        = newOp() // cond ≠ 0 ? a : b, broadcasting among the three
)

func init() {
	defineOps(map[opKind]opDef{
		opMaxElem:      {name: "maximum", cpu: cpu(maxElemKernel, maxElemKernel), grad: maxElemGrad},
		opMinElem:      {name: "minimum", cpu: cpu(minElemKernel, minElemKernel), grad: minElemGrad},
		opGreater:      {name: "greater", cpu: cpu(greaterKernel, greaterKernel), stopsGradient: true},
		opGreaterEqual: {name: "greater_equal", cpu: cpu(greaterEqualKernel, greaterEqualKernel), stopsGradient: true},
		opLess:         {name: "less", cpu: cpu(lessKernel, lessKernel), stopsGradient: true},
		opLessEqual:    {name: "less_equal", cpu: cpu(lessEqualKernel, lessEqualKernel), stopsGradient: true},
		opEqual:        {name: "equal", cpu: cpu(equalKernel, equalKernel), stopsGradient: true},
		opWhere:        {name: "where", cpu: cpu(whereKernel, whereKernel), grad: whereGrad},
	})
}

// Maximum returns max(a, b) elementwise, broadcasting as Add does; NaN
// wins, as with Go's max. The gradient goes to a where a ≥ b and to b
// elsewhere, so ties send all of it to a.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Maximum(a, b *Node) *Node { return binary(opMaxElem, a, b) }

// Minimum returns min(a, b) elementwise, broadcasting as Add does; NaN
// wins, as with Go's min. The gradient goes to a where a ≤ b and to b
// elsewhere.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Minimum(a, b *Node) *Node { return binary(opMinElem, a, b) }

// Greater returns 1 where a > b and 0 elsewhere, in the operands' dtype,
// broadcasting as Add does. Comparisons pass no gradient to their operands
// (as StopGradient): their derivative is zero wherever it exists.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Greater(a, b *Node) *Node { return binary(opGreater, a, b) }

// GreaterEqual returns 1 where a ≥ b and 0 elsewhere, as Greater does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func GreaterEqual(a, b *Node) *Node { return binary(opGreaterEqual, a, b) }

// Less returns 1 where a < b and 0 elsewhere, as Greater does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Less(a, b *Node) *Node { return binary(opLess, a, b) }

// LessEqual returns 1 where a ≤ b and 0 elsewhere, as Greater does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func LessEqual(a, b *Node) *Node { return binary(opLessEqual, a, b) }

// Equal returns 1 where a == b and 0 elsewhere (NaN equals nothing), as
// Greater does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Equal(a, b *Node) *Node { return binary(opEqual, a, b) }

// Where returns a where cond is non-zero and b elsewhere (a NaN cond picks
// a), broadcasting cond, a and b to one shape. A comparison makes a cond of
// 0s and 1s. The gradient flows to a and b, each where it was picked; cond
// gets none.
// It panics with an error wrapping ErrShape if the three shapes do not
// broadcast.
func Where(cond, a, b *Node) *Node {
	const op = "where"
	g := graphOf(op, cond, a, b)
	ab, ok := tryBroadcast(a.shape, b.shape)
	shape, ok2 := tryBroadcast(cond.shape, ab)
	if !ok || !ok2 {
		panic(shapeErr(g, op, fmt.Sprintf("want shapes that broadcast, got %v, %v and %v", cond.shape, a.shape, b.shape)))
	}
	return g.add(opWhere, shape, cond, a, b)
}

func cmp01[T Float](c bool) T {
	if c {
		return 1
	}
	return 0
}

func maxElemKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return max(a, b) })
}

func minElemKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return min(a, b) })
}

func greaterKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return cmp01[T](a > b) })
}

func greaterEqualKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return cmp01[T](a >= b) })
}

func lessKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return cmp01[T](a < b) })
}

func lessEqualKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return cmp01[T](a <= b) })
}

func equalKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return binaryKernel(n, in, out, func(a, b T) T { return cmp01[T](a == b) })
}

// whereKernel is: out[e] = c[ic] ≠ 0 ? a[ia] : b[ib], each index its
// operand's element broadcast to e.
func whereKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	c, a, b := in[0], in[1], in[2]
	it := newBcastIter(n.shape, n.in[0].shape, n.in[1].shape, n.in[2].shape)
	return func() {
		it.reset()
		m, sc := it.inner(0)
		_, sa := it.inner(1)
		_, sb := it.inner(2)
		for o := 0; o < len(out); o += m {
			ic, ia, ib := it.offs[0], it.offs[1], it.offs[2]
			row := out[o : o+m]
			for j := range row {
				if c[ic+j*sc] != 0 {
					row[j] = a[ia+j*sa]
				} else {
					row[j] = b[ib+j*sb]
				}
			}
			it.next()
		}
	}
}

// The gradients of the ops above; each is an opDef.grad.

func maxElemGrad(n, dy *Node) []*Node { return pickGrad(n, dy, GreaterEqual(n.in[0], n.in[1])) }
func minElemGrad(n, dy *Node) []*Node { return pickGrad(n, dy, LessEqual(n.in[0], n.in[1])) }

// pickGrad sends dy to n's first operand where pickA is 1 and to its second
// elsewhere, each summed back to its operand's shape.
func pickGrad(n, dy, pickA *Node) []*Node {
	zero := n.g.Const(0)
	return []*Node{
		reduceTo(Where(pickA, dy, zero), n.in[0].shape),
		reduceTo(Where(pickA, zero, dy), n.in[1].shape),
	}
}

func whereGrad(n, dy *Node) []*Node {
	zero := n.g.Const(0)
	cond := n.in[0]
	return []*Node{
		nil,
		reduceTo(Where(cond, dy, zero), n.in[1].shape),
		reduceTo(Where(cond, zero, dy), n.in[2].shape),
	}
}
