package graph

import (
	"math"

	"github.com/gotrain/gotrain/internal/loops"
)

// The softmax ops, over the last axis or any axis, and their gradients.
var (
	opSoftmax            = newOp()
	opLogSoftmax         = newOp()
	opSoftmaxGrad        = newOp() // dx from softmax output y and dy
	opLogSoftmaxGrad     = newOp() // dx from log-softmax output y and dy
	opSoftmaxAxis        = newOp() // softmax along axis
	opLogSoftmaxAxis     = newOp() // log softmax along axis
	opSoftmaxAxisGrad    = newOp() // dx from softmax_axis output y and dy
	opLogSoftmaxAxisGrad = newOp() // dx from log_softmax_axis output y and dy
)

func init() {
	defineOps(map[opKind]opDef{
		opSoftmax:            {name: "softmax", cpu: cpu(softmaxKernel, softmaxKernel), grad: softmaxOpGrad},
		opLogSoftmax:         {name: "log_softmax", cpu: cpu(logSoftmaxKernel, logSoftmaxKernel), grad: logSoftmaxOpGrad},
		opSoftmaxGrad:        {name: "softmax_grad", cpu: cpu(softmaxGradKernel, softmaxGradKernel), backward: true},
		opLogSoftmaxGrad:     {name: "log_softmax_grad", cpu: cpu(logSoftmaxGradKernel, logSoftmaxGradKernel), backward: true},
		opSoftmaxAxis:        {name: "softmax_axis", cpu: cpu(softmaxAxisKernel, softmaxAxisKernel), grad: softmaxAxisGrad},
		opLogSoftmaxAxis:     {name: "log_softmax_axis", cpu: cpu(logSoftmaxAxisKernel, logSoftmaxAxisKernel), grad: logSoftmaxAxisGrad},
		opSoftmaxAxisGrad:    {name: "softmax_axis_grad", cpu: cpu(softmaxAxisGradKernel, softmaxAxisGradKernel), backward: true},
		opLogSoftmaxAxisGrad: {name: "log_softmax_axis_grad", cpu: cpu(logSoftmaxAxisGradKernel, logSoftmaxAxisGradKernel), backward: true},
	})
}

func lastAxis(op string, x *Node) *Node {
	g := graphOf(op, x)
	if len(x.shape) == 0 {
		panic(shapeErr(g, op, "want at least one axis, got a scalar"))
	}
	return x
}

// Softmax returns exp(x) normalised over the last axis, computed stably.
// It panics with an error wrapping ErrShape if x is a scalar.
func Softmax(x *Node) *Node { return unary(opSoftmax, lastAxis("softmax", x)) }

// LogSoftmax returns x - log(Σ exp(x)) over the last axis, computed stably.
// It panics with an error wrapping ErrShape if x is a scalar.
func LogSoftmax(x *Node) *Node { return unary(opLogSoftmax, lastAxis("log_softmax", x)) }

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

func softmaxOpGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opSoftmaxGrad, n.shape, n, dy)}
}

func logSoftmaxOpGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opLogSoftmaxGrad, n.shape, n, dy)}
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

func softmaxKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], n.shape[len(n.shape)-1]
	return func() { softmaxRows(out, x, c, false) }
}

func logSoftmaxKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], n.shape[len(n.shape)-1]
	return func() { softmaxRows(out, x, c, true) }
}

func softmaxGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, c := in[0], in[1], n.shape[len(n.shape)-1]
	return func() { softmaxGrad(out, y, dy, c) }
}

func logSoftmaxGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, c := in[0], in[1], n.shape[len(n.shape)-1]
	return func() { logSoftmaxGrad(out, y, dy, c) }
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

// softmaxRows is: per row of c elements, out = softmax(x) or log softmax(x).
// Softmax takes its exponentials from loops.ExpSubTo: float32 rows are
// exact to a few float32 ulps, not to float64's; the CUDA kernel
// (gt_softmax in kernels_cuda.go) computes in double.
func softmaxRows[T Float](out, x []T, c int, log bool) {
	if c == 0 {
		return // empty rows; the row loop would not advance
	}
	for r := 0; r+c <= len(x); r += c {
		row, dst := x[r:r+c], out[r:r+c]
		// The maximum skips NaNs; a NaN still makes its row's sum, and
		// so the row, NaN.
		mx := loops.Max(row)
		if !log {
			// The exponentials of float32 rows go 8 at a time (attention's
			// softmax).
			loops.ScaleTo(dst, 1/loops.ExpSubTo(dst, row, mx), dst)
			continue
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - float64(mx))
		}
		lse := float64(mx) + math.Log(s)
		for j, v := range row {
			dst[j] = T(float64(v) - lse)
		}
	}
}

// softmaxGrad is: per row, out = y ⊙ (dy - Σ y⊙dy), the sum by
// loops.Dot and the rest by loops.SoftmaxGradTo, in float64.
// Keep in sync with softmax_grad_row (kernels_cuda.go).
func softmaxGrad[T Float](out, y, dy []T, c int) {
	if c == 0 {
		return // empty rows; the row loop would not advance
	}
	for r := 0; r+c <= len(y); r += c {
		yr, dr := y[r:r+c], dy[r:r+c]
		loops.SoftmaxGradTo(out[r:r+c], yr, dr, loops.Dot(yr, dr))
	}
}

// logSoftmaxGrad is: per row, out = dy - exp(y)·Σ dy.
func logSoftmaxGrad[T Float](out, y, dy []T, c int) {
	if c == 0 {
		return // empty rows; the row loop would not advance
	}
	for r := 0; r+c <= len(y); r += c {
		yr, dr, o := y[r:r+c], dy[r:r+c], out[r:r+c]
		var s float64
		for _, v := range dr {
			s += float64(v)
		}
		for j, v := range yr {
			o[j] = T(float64(dr[j]) - math.Exp(float64(v))*s)
		}
	}
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
