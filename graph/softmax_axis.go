package graph

import "math"

// SoftmaxAxis returns exp(x) normalised along axis (negative: from the
// end), computed stably. On the last axis it is Softmax.
// It panics with an error wrapping ErrShape if the axis is out of range.
func SoftmaxAxis(x *Node, axis int) *Node {
	return softmaxAlong("softmax_axis", opSoftmaxAxis, x, axis, Softmax)
}

// LogSoftmaxAxis returns x - log(Σ exp(x)) along axis (negative: from the
// end), computed stably. On the last axis it is LogSoftmax.
// It panics with an error wrapping ErrShape if the axis is out of range.
func LogSoftmaxAxis(x *Node, axis int) *Node {
	return softmaxAlong("log_softmax_axis", opLogSoftmaxAxis, x, axis, LogSoftmax)
}

func softmaxAlong(name string, op opKind, x *Node, axis int, last func(*Node) *Node) *Node {
	g, ax := normAxis(name, x, axis)
	if ax == len(x.shape)-1 {
		return last(x) // contiguous rows: the fused kernel
	}
	out := g.add(op, x.shape, x)
	out.axis = ax
	return out
}

func softmaxAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.shape, n.axis)
	return func() { softmaxStrided(out, x, outer, d, inner, false) }
}

func logSoftmaxAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.shape, n.axis)
	return func() { softmaxStrided(out, x, outer, d, inner, true) }
}

// softmaxStrided is softmaxRows along the middle axis of [outer,d,inner]:
// each row is x[o,·,i].
func softmaxStrided[T Float](out, x []T, outer, d, inner int, log bool) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*d*inner + i
			mx := math.Inf(-1)
			for k := 0; k < d; k++ {
				mx = math.Max(mx, float64(x[base+k*inner]))
			}
			var s float64
			for k := 0; k < d; k++ {
				e := math.Exp(float64(x[base+k*inner]) - mx)
				s += e
				if !log {
					out[base+k*inner] = T(e)
				}
			}
			if log {
				lse := mx + math.Log(s)
				for k := 0; k < d; k++ {
					out[base+k*inner] = T(float64(x[base+k*inner]) - lse)
				}
			} else {
				inv := 1 / s
				for k := 0; k < d; k++ {
					out[base+k*inner] = T(float64(out[base+k*inner]) * inv)
				}
			}
		}
	}
}

func softmaxAxisGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy := in[0], in[1]
	outer, d, inner := axisSplit(n.shape, n.axis)
	return func() { softmaxGradStrided(out, y, dy, outer, d, inner, false) }
}

func logSoftmaxAxisGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy := in[0], in[1]
	outer, d, inner := axisSplit(n.shape, n.axis)
	return func() { softmaxGradStrided(out, y, dy, outer, d, inner, true) }
}

// softmaxGradStrided is softmaxGrad (log: logSoftmaxGrad) along the middle
// axis of [outer,d,inner].
func softmaxGradStrided[T Float](out, y, dy []T, outer, d, inner int, log bool) {
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			base := o*d*inner + i
			var s float64
			for k := 0; k < d; k++ {
				if log {
					s += float64(dy[base+k*inner])
				} else {
					s += float64(y[base+k*inner]) * float64(dy[base+k*inner])
				}
			}
			for k := 0; k < d; k++ {
				e := base + k*inner
				if log {
					out[e] = T(float64(dy[e]) - math.Exp(float64(y[e]))*s)
				} else {
					out[e] = T(float64(y[e]) * (float64(dy[e]) - s))
				}
			}
		}
	}
}

func softmaxAxisGrad(n, dy *Node) []*Node {
	d := n.g.add(opSoftmaxAxisGrad, n.shape, n, dy)
	d.axis = n.axis
	return []*Node{d}
}

func logSoftmaxAxisGrad(n, dy *Node) []*Node {
	d := n.g.add(opLogSoftmaxAxisGrad, n.shape, n, dy)
	d.axis = n.axis
	return []*Node{d}
}
