package graph

import (
	"fmt"
	"slices"
)

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

func extremeAxisGrad(n, dy *Node) []*Node {
	d := n.g.add(opExtremeAxisGrad, n.in[0].shape, n.in[0], n, dy)
	d.axis = n.axis
	return []*Node{d}
}
