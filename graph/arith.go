package graph

import "github.com/gotrain/gotrain/internal/loops"

// arithKernel is binaryKernel for op, with the same bits: equal runs go
// through loops.AddTo, SubTo, MulTo or DivTo, a vector along the last
// axis through loops.RowsOpTo or OpRowsTo, runs against one repeated
// element through a plain loop, and only runs that stride otherwise call f
// per element. Batch norm's ops (an activation against a per-channel
// vector, [N,H,W,C] with [C]) and bias adds take these paths every step
// (issue 23).
func arithKernel[T Float](n *Node, in [][]T, out []T, op loops.Op, f func(a, b T) T) func() {
	a, b := in[0], in[1]
	switch n.mode {
	case bSame:
		return func() { loops.OpTo(op, out, a, b) }
	case bScalarA:
		return func() { arithScalarA(op, out, a[0], b) }
	case bScalarB:
		return func() { arithScalarB(op, out, a, b[0]) }
	case bVecA:
		return func() { loops.OpRowsTo(op, out, a, b) }
	case bVecB:
		return func() { loops.RowsOpTo(op, out, a, b) }
	}
	it := newBcastIter(n.shape, n.in[0].shape, n.in[1].shape)
	return func() { arithBcastLoop(op, out, a, b, it, f) }
}

// arithBcastLoop is bcastBinaryLoop for op: each run of the innermost axis
// where both operands step by one, or one of them by zero (a [N,C] with an
// [N,1]), takes loops.OpTo or a plain loop; f is for the other runs.
func arithBcastLoop[T Float](op loops.Op, out, a, b []T, it *bcastIter, f func(a, b T) T) {
	it.reset()
	n, sa := it.inner(0)
	_, sb := it.inner(1)
	for o := 0; o < len(out); o += n {
		ia, ib := it.offs[0], it.offs[1]
		row := out[o : o+n]
		switch {
		case sa == 1 && sb == 1:
			loops.OpTo(op, row, a[ia:ia+n], b[ib:ib+n])
		case sa == 1 && sb == 0:
			arithScalarB(op, row, a[ia:ia+n], b[ib])
		case sa == 0 && sb == 1:
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
