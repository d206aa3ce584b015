package graph

import (
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/internal/loops"
)

// The reductions: to a scalar, along axes, the extremes along an axis, and
// the masked sums.
var (
	opSum             = newOp()
	opMean            = newOp()
	opSumAxis         = newOp()
	opMaxAxis         = newOp() // max along axis, kept as size 1
	opMinAxis         = newOp() // min along axis, kept as size 1
	opExtremeAxisGrad = newOp() // dx: dy at the first x equal to max or min along axis
	opMaskedSum       = newOp() // Σ_b w[b]·x[b,…,c], per channel
	opMaskedSumGradX  = newOp() // dx[b,…,c] = w[b]·dy[c]
	opMaskedSumGradW  = newOp() // dw[b] = Σ x[b,…,c]·dy[c]
)

func init() {
	defineOps(map[opKind]opDef{
		opSum:             {name: "sum", cpu: cpu(sumKernel, sumKernel), grad: sumGrad},
		opMean:            {name: "mean", cpu: cpu(meanKernel, meanKernel), grad: meanGrad},
		opSumAxis:         {name: "sum_axis", cpu: cpu(sumAxisKernel, sumAxisKernel), grad: sumAxisGrad},
		opMaxAxis:         {name: "max_axis", cpu: cpu(maxAxisKernel, maxAxisKernel), grad: extremeAxisGrad},
		opMinAxis:         {name: "min_axis", cpu: cpu(minAxisKernel, minAxisKernel), grad: extremeAxisGrad},
		opExtremeAxisGrad: {name: "extreme_axis_grad", cpu: cpu(extremeAxisGradKernel, extremeAxisGradKernel), backward: true},
		opMaskedSum:       {name: "masked_sum", cpu: cpu(maskedSumKernel, maskedSumKernel), grad: maskedSumOpGrad},
		opMaskedSumGradX:  {name: "masked_sum_grad", cpu: cpu(maskedSumGradXKernel, maskedSumGradXKernel), backward: true},
		opMaskedSumGradW:  {name: "masked_sum_weight_grad", cpu: cpu(maskedSumGradWKernel, maskedSumGradWKernel), backward: true},
	})
}

// Sum returns the sum of all elements, a scalar (shape []).
func Sum(x *Node) *Node {
	g := graphOf("sum", x)
	return g.add(opSum, nil, x)
}

// Mean returns the mean of all elements, a scalar (shape []).
func Mean(x *Node) *Node {
	g := graphOf("mean", x)
	return g.add(opMean, nil, x)
}

// SumAxis returns the sum over one axis, which is removed from the shape.
// A negative axis counts from the end.
// It panics with an error wrapping ErrShape if the axis is out of range.
func SumAxis(x *Node, axis int) *Node {
	g, axis := normAxis("sum_axis", x, axis)
	out := g.add(opSumAxis, slices.Delete(slices.Clone(x.shape), axis, axis+1), x)
	out.axis = axis
	out.factor = 1
	return out
}

// MeanAxis returns the mean over one axis, which is removed from the shape.
// A negative axis counts from the end.
// It panics with an error wrapping ErrShape if the axis is out of range.
func MeanAxis(x *Node, axis int) *Node {
	g, axis := normAxis("mean_axis", x, axis)
	out := g.add(opSumAxis, slices.Delete(slices.Clone(x.shape), axis, axis+1), x)
	out.axis = axis
	out.factor = 1
	if d := x.shape[axis]; d > 0 {
		out.factor = 1 / float64(d)
	}
	return out
}

// SumAxes returns the sum of x over the given axes; no axes means every
// axis. A negative axis counts from the end. With keepDims the summed axes
// stay as size 1, so the result broadcasts against x; without, they are
// removed. The sum accumulates in float64, in x's element order.
// It panics with an error wrapping ErrShape if an axis is out of range or
// repeated.
func SumAxes(x *Node, keepDims bool, axes ...int) *Node {
	return reduceAxes("sum_axes", x, keepDims, axes, false)
}

// MeanAxes returns the mean of x over the given axes, as SumAxes sums
// them; the mean over no elements is 0.
// It panics with an error wrapping ErrShape if an axis is out of range or
// repeated.
func MeanAxes(x *Node, keepDims bool, axes ...int) *Node {
	return reduceAxes("mean_axes", x, keepDims, axes, true)
}

func reduceAxes(op string, x *Node, keepDims bool, axes []int, mean bool) *Node {
	g := graphOf(op, x)
	r := len(x.shape)
	red := make([]bool, r)
	for _, a := range axes {
		ax := a
		if ax < 0 {
			ax += r
		}
		if ax < 0 || ax >= r {
			panic(shapeErr(g, op, fmt.Sprintf("want axes in [-%d,%d), got %v for shape %v", r, r, axes, x.shape)))
		}
		if red[ax] {
			panic(shapeErr(g, op, fmt.Sprintf("want distinct axes, got %v for shape %v", axes, x.shape)))
		}
		red[ax] = true
	}
	keep, count := slices.Clone(x.shape), 1
	var dropped []int
	for i, d := range x.shape {
		if red[i] || len(axes) == 0 {
			count *= d
			keep[i] = 1
		} else {
			dropped = append(dropped, d)
		}
	}
	out := x
	if !slices.Equal(keep, x.shape) {
		f := 1.0
		if mean && count > 0 {
			f = 1 / float64(count)
		}
		out = sumTo(x, keep, f)
	}
	if keepDims {
		return out
	}
	return Reshape(out, dropped...)
}

// MaxAxis returns the maximum of x along axis (negative: from the end); NaN
// wins, as with Go's max. With keepDims the axis stays as size 1, else it
// is removed. The gradient goes to the first element along the axis equal
// to the maximum.
// It panics with an error wrapping ErrShape if the axis is out of range or
// empty.
func MaxAxis(x *Node, axis int, keepDims bool) *Node {
	return extremeAxis("max_axis", opMaxAxis, x, axis, keepDims)
}

// MinAxis returns the minimum of x along axis, as MaxAxis does the
// maximum.
// It panics with an error wrapping ErrShape if the axis is out of range or
// empty.
func MinAxis(x *Node, axis int, keepDims bool) *Node {
	return extremeAxis("min_axis", opMinAxis, x, axis, keepDims)
}

func extremeAxis(name string, op opKind, x *Node, axis int, keepDims bool) *Node {
	g, ax := normAxis(name, x, axis)
	if x.shape[ax] == 0 {
		panic(shapeErr(g, name, fmt.Sprintf("want a non-empty axis %d, got shape %v", axis, x.shape)))
	}
	out := x
	if x.shape[ax] != 1 {
		keep := slices.Clone(x.shape)
		keep[ax] = 1
		out = g.add(op, keep, x)
		out.axis = ax
	}
	if keepDims {
		return out
	}
	return Reshape(out, slices.Delete(slices.Clone(x.shape), ax, ax+1)...)
}

// MaskedSum returns, for x [b, …, c] and weights w [b], the per-channel sum
// Σ_b w[b]·Σ_… x[b,…,c], shape [c]: the first moment of a batch whose rows
// are weighted by a mask. Rows of weight 0 are skipped, so whatever padding
// rows hold (even Inf or NaN) never reaches the sum. Both x and w get
// gradients.
// It panics with an error wrapping ErrShape if x has rank < 2 or w is not
// [b].
func MaskedSum(x, w *Node) *Node {
	const op = "masked_sum"
	g := graphOf(op, x, w)
	if len(x.shape) < 2 || len(w.shape) != 1 || w.shape[0] != x.shape[0] {
		panic(shapeErr(g, op, fmt.Sprintf("want x [batch, …, channels] and weights [batch], got %v and %v", x.shape, w.shape)))
	}
	return g.add(opMaskedSum, x.shape[len(x.shape)-1:], x, w)
}

func sumGrad(n, dy *Node) []*Node { return []*Node{broadcastScalar(dy, n.in[0].shape, 1)} }

func meanGrad(n, dy *Node) []*Node {
	f := 0.0
	if n.in[0].size > 0 {
		f = 1 / float64(n.in[0].size)
	}
	return []*Node{broadcastScalar(dy, n.in[0].shape, f)}
}

func sumAxisGrad(n, dy *Node) []*Node {
	return []*Node{broadcastAxis(dy, n.in[0].shape, n.axis, n.factor)}
}

func extremeAxisGrad(n, dy *Node) []*Node {
	d := n.g.add(opExtremeAxisGrad, n.in[0].shape, n.in[0], n, dy)
	d.axis = n.axis
	return []*Node{d}
}

func maskedSumOpGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	return []*Node{
		g.add(opMaskedSumGradX, in[0].shape, in[1], dy),
		g.add(opMaskedSumGradW, in[1].shape, in[0], dy),
	}
}

func sumKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	return sumScaled(in[0], out, 1)
}

func meanKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	f := 1.0
	if len(in[0]) > 0 {
		f = 1 / float64(len(in[0]))
	}
	return sumScaled(in[0], out, f)
}

// sumScaled is: out[0] = f · Σ x, accumulated in float64.
func sumScaled[T Float](x, out []T, f float64) func() {
	return func() {
		var s float64
		for _, v := range x {
			s += float64(v)
		}
		out[0] = T(s * f)
	}
}

func sumAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.in[0].shape, n.axis)
	f := T(n.factor)
	return func() { sumAxis(out, x, outer, d, inner, f) }
}

// sumAxis is: out[o,i] = f · Σₖ x[o,k,i].
func sumAxis[T Float](out, x []T, outer, d, inner int, f T) {
	for o := 0; o < outer; o++ {
		dst := out[o*inner : (o+1)*inner]
		clear(dst)
		if inner >= vectorMin || inner%8 == 0 {
			// A batch norm's or bias's gradient over [rows, channels]:
			// one call for all rows, 8 float32 lanes at a time.
			loops.SumRowsTo(dst, x[o*d*inner:(o+1)*d*inner])
		} else {
			for k := 0; k < d; k++ {
				for i, v := range x[(o*d+k)*inner : (o*d+k+1)*inner] {
					dst[i] += v
				}
			}
		}
		if f != 1 {
			for i := range dst {
				dst[i] *= f
			}
		}
	}
}

func maxAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return extremeAxisKernel(n, in, out, func(a, b T) T { return max(a, b) })
}

func minAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return extremeAxisKernel(n, in, out, func(a, b T) T { return min(a, b) })
}

// extremeAxisKernel is: out[o,i] = pick(…pick(x[o,0,i], x[o,1,i])…, x[o,d-1,i]).
func extremeAxisKernel[T Float](n *Node, in [][]T, out []T, pick func(a, b T) T) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.in[0].shape, n.axis)
	return func() {
		for o := 0; o < outer; o++ {
			dst := out[o*inner : (o+1)*inner]
			copy(dst, x[o*d*inner:])
			for k := 1; k < d; k++ {
				for i, v := range x[(o*d+k)*inner : (o*d+k+1)*inner] {
					dst[i] = pick(dst[i], v)
				}
			}
		}
	}
}

// extremeAxisGradKernel is: dx[o,k,i] = dy[o,i] for the first k where
// x[o,k,i] equals y[o,i] (or both are NaN), 0 elsewhere.
func extremeAxisGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, y, dy := in[0], in[1], in[2]
	outer, d, inner := axisSplit(n.shape, n.axis)
	return func() {
		clear(out)
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				m := y[o*inner+i]
				for k := 0; k < d; k++ {
					e := (o*d+k)*inner + i
					if v := x[e]; v == m || (v != v && m != m) {
						out[e] = dy[o*inner+i]
						break
					}
				}
			}
		}
	}
}

func maskedSumKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, w := in[0], in[1]
	c := n.shape[0]
	acc := make([]float64, c)
	return func() { maskedSum(out, x, w, acc) }
}

func maskedSumGradXKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	w, dy := in[0], in[1]
	return func() { maskedSumGradX(out, w, dy) }
}

func maskedSumGradWKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dy := in[0], in[1]
	return func() { maskedSumGradW(out, x, dy) }
}

// maskedSum is: out[c] = Σ_{b: w[b]≠0} w[b]·Σ_k x[b,k,c], accumulated in
// float64 in acc.
func maskedSum[T Float](out, x, w []T, acc []float64) {
	c := len(out)
	clear(acc)
	if c == 0 || len(w) == 0 {
		clear(out)
		return
	}
	per := len(x) / len(w) // k·c elements per row
	for b, wb := range w {
		if wb == 0 {
			continue
		}
		loops.AccRowsTo(acc, float64(wb), x[b*per:(b+1)*per])
	}
	for j, v := range acc {
		out[j] = T(v)
	}
}

// maskedSumGradX is: dx[b,k,c] = w[b]·dy[c]. Each row's first c elements
// are computed, and the rest copied from them in doubling runs.
func maskedSumGradX[T Float](dx, w, dy []T) {
	c := len(dy)
	if c == 0 || len(w) == 0 {
		return
	}
	per := len(dx) / len(w)
	if per == 0 {
		return
	}
	for b, wb := range w {
		row := dx[b*per : (b+1)*per]
		for j, v := range dy {
			row[j] = wb * v
		}
		for done := c; done < per; done *= 2 {
			copy(row[done:], row[:done])
		}
	}
}

// maskedSumGradW is: dw[b] = Σ_{k,c} x[b,k,c]·dy[c].
func maskedSumGradW[T Float](dw, x, dy []T) {
	c := len(dy)
	if c == 0 || len(dw) == 0 {
		clear(dw)
		return
	}
	per := len(x) / len(dw)
	for b := range dw {
		row := x[b*per : (b+1)*per]
		var s float64
		for r := 0; r < per; r += c {
			for j, v := range row[r : r+c] {
				s += float64(v) * float64(dy[j])
			}
		}
		dw[b] = T(s)
	}
}
