package graph

import (
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/internal/dnnl"
)

// The convolution ops Conv2D builds in float32 when oneDNN is built in
// (issue 36): one node per convolution and one per gradient, each a oneDNN
// primitive created when the Program is compiled and run at every step.
// Float64 graphs, builds without oneDNN (the nodnnl tag, no cgo) and cuda
// builds, whose devices have no kernel for these ops, keep the im2col +
// gemm nodes, which are also the reference the oneDNN path is tested
// against.

// convOneDNN reports whether Conv2D builds the conv ops for float32 graphs:
// oneDNN is built in and the build has no devices these ops cannot run on.
// Tests turn it off to build the im2col reference.
var convOneDNN = dnnl.Available && !cudaBuild

// ConvBackend describes how float32 convolutions run in this build, for
// `gotrain version` and session start: "oneDNN 2.6.3 (omp)", or a line
// saying they use im2col and BLAS, with oneDNN false.
func ConvBackend() (desc string, oneDNN bool) {
	switch {
	case convOneDNN:
		return dnnl.Version(), true
	case cudaBuild:
		return "im2col + BLAS (cuda builds keep them, as their devices have no oneDNN ops)", false
	}
	return "im2col + BLAS (this build has no oneDNN: install/setup.sh installs libdnnl-dev, and a build with cgo uses it)", false
}

// convObserver is ObserveConvs's f.
var convObserver func(node string, c *dnnl.Conv)

// ObserveConvs calls f, until restore, with each oneDNN primitive a
// Program's conv ops build as it is compiled: the node's name and the
// primitive, nil where oneDNN refused the shape and the op falls back to
// im2col. It is for tests (which implementation each layer got) and
// gotrain bench resnet (each convolution of a step, timed). Replicas
// compile at once, so f may be called concurrently; set and restore it
// while no Program compiles.
func ObserveConvs(f func(node string, c *dnnl.Conv)) (restore func()) {
	prev := convObserver
	convObserver = f
	return func() { convObserver = prev }
}

// conv adds the conv node for x ⋆ w (+ b) through act on window win;
// Conv2DDilated has checked the shapes. ReLU is fused into the primitive;
// other activations follow as their own node.
func conv(g *Graph, x, w, b *Node, win *window, act Activation) *Node {
	in := []*Node{x, w}
	if b != nil {
		in = append(in, b)
	}
	fused := Linear
	if act == ReLU {
		fused = ReLU
	}
	y := g.add(opConv, []int{win.b, win.oh, win.ow, w.shape[3]}, in...)
	y.win, y.act = win, fused
	if act != fused {
		return Activate(y, act)
	}
	return y
}

func convGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	dz := dy
	if n.act != Linear {
		dz = g.add(opActGradY, n.shape, n, dy)
		dz.act = n.act
	}
	dx := g.add(opConvGradInput, in[0].shape, dz, in[1])
	dw := g.add(opConvGradFilter, in[1].shape, in[0], dz)
	dx.win, dw.win = n.win, n.win
	out := []*Node{dx, dw}
	if len(in) == 3 {
		cout := n.shape[3]
		out = append(out, SumAxis(Reshape(dz, n.size/cout, cout), 0))
	}
	return out
}

// geometry is w's convolution with cout output channels as dnnl sees it.
func (w *window) geometry(cout int) dnnl.Geometry {
	return dnnl.Geometry{N: w.b, H: w.h, W: w.w, C: w.c, K: cout, KH: w.kh, KW: w.kw, OH: w.oh, OW: w.ow,
		SH: w.sh, SW: w.sw, DH: w.dh, DW: w.dw, PadT: w.padT, PadL: w.padL}
}

// newConvPrimitive builds n's oneDNN primitive, or returns nil where this
// build has none, the dtype is float64, or oneDNN refuses the shape: the
// kernel then computes through im2col.
func newConvPrimitive[T Float](n *Node, kind dnnl.Kind, cout int) *dnnl.Conv {
	var z T
	if _, f32 := any(z).(float32); !f32 || !dnnl.Available {
		return nil
	}
	// A shape oneDNN refuses is one the im2col kernel computes: c is nil.
	c, _ := dnnl.New(kind, n.win.geometry(cout), kind == dnnl.Forward && len(n.in) == 3, kind == dnnl.Forward && n.act == ReLU, blas.Threads())
	if convObserver != nil {
		convObserver(n.Name(), c)
	}
	return c
}

// f32 returns s as []float32; the caller has checked T is float32.
func f32[T Float](s []T) []float32 { return any(s).([]float32) }

// convKernel is y = act(im2col(x)·w + b), through oneDNN in float32.
func convKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, w := in[0], in[1]
	var b []T
	if len(in) == 3 {
		b = in[2]
	}
	win, cout, act := n.win, n.shape[3], n.act
	if c := newConvPrimitive[T](n, dnnl.Forward, cout); c != nil {
		y, xf, wf, bf := f32(out), f32(x), f32(w), []float32(nil)
		if b != nil {
			bf = f32(b)
		}
		return func() { c.Forward(y, xf, wf, bf) }
	}
	gemm := gemmFor[T]()
	m, k := win.b*win.oh*win.ow, win.kh*win.kw*win.c
	cols := make([]T, m*k)
	return func() {
		im2col(cols, x, win)
		gemm(false, false, m, cout, k, 1, cols, k, w, cout, 0, out, cout)
		biasAct(out, b, cout, act)
	}
}

// convGradInputKernel is dx = col2im(dy·wᵀ), through oneDNN in float32.
func convGradInputKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	dy, w := in[0], in[1]
	win, cout := n.win, n.in[1].shape[3]
	if c := newConvPrimitive[T](n, dnnl.BackwardData, cout); c != nil {
		dx, dyf, wf := f32(out), f32(dy), f32(w)
		return func() { c.BackwardData(dx, dyf, wf) }
	}
	gemm := gemmFor[T]()
	m, k := win.b*win.oh*win.ow, win.kh*win.kw*win.c
	cols := make([]T, m*k)
	return func() {
		gemm(false, true, m, k, cout, 1, dy, cout, w, cout, 0, cols, k)
		col2im(out, cols, win)
	}
}

// convGradFilterKernel is dw = im2col(x)ᵀ·dy, through oneDNN in float32.
func convGradFilterKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dy := in[0], in[1]
	win, cout := n.win, n.shape[3]
	if c := newConvPrimitive[T](n, dnnl.BackwardWeights, cout); c != nil {
		dw, xf, dyf := f32(out), f32(x), f32(dy)
		return func() { c.BackwardWeights(dw, xf, dyf) }
	}
	gemm := gemmFor[T]()
	m, k := win.b*win.oh*win.ow, win.kh*win.kw*win.c
	cols := make([]T, m*k)
	return func() {
		im2col(cols, x, win)
		gemm(true, false, k, cout, m, 1, cols, k, dy, cout, 0, out, cout)
	}
}
