package graph

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/internal/dnnl"
	"github.com/gotrain/gotrain/internal/loops"
)

// The convolution ops: im2col and col2im around a gemm, and the oneDNN
// convolutions, which no device runs (hostOnly).
var (
	opIm2Col         = newOp() // conv patches [b·oh·ow, kh·kw·c]
	opCol2Im         = newOp() // Im2Col's gradient: patches summed back to the image
	opConv           = newOp() // act(x ⋆ w + b), act Linear or ReLU
	opConvGradInput  = newOp() // dx from dy and w
	opConvGradFilter = newOp() // dw from x and dy
)

func init() {
	defineOps(map[opKind]opDef{
		opIm2Col:         {name: "im2col", cpu: cpu(windowKernel(im2col[float32]), windowKernel(im2col[float64])), grad: im2colGrad},
		opCol2Im:         {name: "col2im", cpu: cpu(windowKernel(col2im[float32]), windowKernel(col2im[float64])), backward: true},
		opConv:           {name: "conv2d", cpu: cpu(convKernel, convKernel), grad: convGrad, hostOnly: true},
		opConvGradInput:  {name: "conv2d_input_grad", cpu: cpu(convGradInputKernel, convGradInputKernel), backward: true, hostOnly: true},
		opConvGradFilter: {name: "conv2d_filter_grad", cpu: cpu(convGradFilterKernel, convGradFilterKernel), backward: true, hostOnly: true},
	})
}

// Padding selects how Conv2D and the pooling ops treat the image border.
type Padding int

const (
	// Valid uses only the windows that fit inside the image:
	// out = ⌊(in-k)/s⌋ + 1.
	Valid Padding = iota
	// Same pads the border so that out = ⌈in/s⌉, split as TensorFlow splits
	// it: the total padding is max((out-1)·s + k - in, 0) with k the
	// dilated window, and the odd row or column goes at the bottom or
	// right. Conv2D pads with zeros; MaxPool2D leaves padding out of the
	// max and AvgPool2D out of the mean (it divides by the pixels inside).
	Same
	// Causal pads before the image only: (k-1)·d rows above and columns to
	// the left, none after, so that out = ⌈in/s⌉ and output t sees inputs at
	// t·s and before (Keras's Conv1D padding="causal", here on both axes).
	Causal
)

// String returns "valid", "same" or "causal".
func (p Padding) String() string {
	switch p {
	case Valid:
		return "valid"
	case Same:
		return "same"
	case Causal:
		return "causal"
	}
	return fmt.Sprintf("Padding(%d)", int(p))
}

// window is the geometry of a sliding window over an NHWC image, fixed when
// the op is built. Immutable.
type window struct {
	b, h, w, c int // input batch, height, width, channels
	kh, kw     int // window
	sh, sw     int // strides
	dh, dw     int // dilations: the window's taps are dh rows, dw columns apart
	padT, padL int // rows above and columns left of the image
	oh, ow     int // output height and width
}

func newWindow(g *Graph, op string, shape []int, kh, kw, sh, sw, dh, dw int, pad Padding) *window {
	if len(shape) != 4 {
		panic(shapeErr(g, op, fmt.Sprintf("want an NHWC input [batch, height, width, channels], got %v", shape)))
	}
	if kh < 1 || kw < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1 {
		panic(shapeErr(g, op, fmt.Sprintf("want window, strides and dilations ≥ 1, got window %dx%d, strides %dx%d, dilations %dx%d", kh, kw, sh, sw, dh, dw)))
	}
	w := &window{b: shape[0], h: shape[1], w: shape[2], c: shape[3], kh: kh, kw: kw, sh: sh, sw: sw, dh: dh, dw: dw}
	// The span a dilated window covers: k taps d apart.
	eh, ew := (kh-1)*dh+1, (kw-1)*dw+1
	switch pad {
	case Valid:
		if w.h < eh || w.w < ew {
			panic(shapeErr(g, op, fmt.Sprintf("want an image of at least %dx%d for valid padding, got %dx%d", eh, ew, w.h, w.w)))
		}
		w.oh, w.ow = (w.h-eh)/sh+1, (w.w-ew)/sw+1
	case Same:
		w.oh, w.ow = (w.h+sh-1)/sh, (w.w+sw-1)/sw
		w.padT = max((w.oh-1)*sh+eh-w.h, 0) / 2
		w.padL = max((w.ow-1)*sw+ew-w.w, 0) / 2
	case Causal:
		w.oh, w.ow = (w.h+sh-1)/sh, (w.w+sw-1)/sw
		w.padT, w.padL = eh-1, ew-1
	default:
		panic(shapeErr(g, op, fmt.Sprintf("want padding Valid, Same or Causal, got %v", pad)))
	}
	return w
}

// Conv2D returns the 2-D convolution (cross-correlation, as in TensorFlow) of
// the NHWC image x [b,h,w,cin] with kernel w [kh,kw,cin,cout], plus bias b
// [cout] (nil for none), through act: shape [b,oh,ow,cout]. In a float32
// graph of a build with oneDNN it is one conv2d node run by oneDNN, its
// gradients two more (conv.go). Otherwise it is computed as im2col patches
// [b·oh·ow, kh·kw·cin] times the kernel as a matrix (one gemm, bias and
// activation fused as in Dense); its gradient is two gemms and a col2im. A
// 1x1 kernel with stride 1 skips im2col.
// It panics with an error wrapping ErrShape if the shapes, strides or
// padding do not fit.
func Conv2D(x, w, b *Node, strideH, strideW int, pad Padding, act Activation) *Node {
	return Conv2DDilated(x, w, b, strideH, strideW, 1, 1, pad, act)
}

// Conv2DDilated is Conv2D with the kernel's taps dilationH rows and
// dilationW columns apart (atrous convolution, TensorFlow's dilation_rate):
// a kh x kw kernel covers (kh-1)·dilationH+1 rows and (kw-1)·dilationW+1
// columns, and padding and output size count that span. Dilations of 1 are
// Conv2D.
// It panics with an error wrapping ErrShape if the shapes, strides,
// dilations or padding do not fit.
func Conv2DDilated(x, w, b *Node, strideH, strideW, dilationH, dilationW int, pad Padding, act Activation) *Node {
	const op = "conv2d"
	ns := []*Node{x, w}
	if b != nil {
		ns = append(ns, b)
	}
	g := graphOf(op, ns...)
	if len(w.shape) != 4 {
		panic(shapeErr(g, op, fmt.Sprintf("want a kernel [height, width, in, out], got %v", w.shape)))
	}
	if pad == Valid && len(x.shape) == 4 && dilationH >= 1 && dilationW >= 1 &&
		(x.shape[1] < (w.shape[0]-1)*dilationH+1 || x.shape[2] < (w.shape[1]-1)*dilationW+1) {
		panic(shapeErr(g, op, fmt.Sprintf("want an input at least as large as kernel %v (dilations %dx%d) for valid padding, got input %v",
			w.shape, dilationH, dilationW, x.shape)))
	}
	win := newWindow(g, op, x.shape, w.shape[0], w.shape[1], strideH, strideW, dilationH, dilationW, pad)
	if w.shape[2] != win.c {
		panic(shapeErr(g, op, fmt.Sprintf("want an input of %d channels for kernel %v, got input %v", w.shape[2], w.shape, x.shape)))
	}
	cout := w.shape[3]
	if b != nil && (len(b.shape) != 1 || b.shape[0] != cout) {
		panic(shapeErr(g, op, fmt.Sprintf("want a bias [%d] for kernel %v, got %v", cout, w.shape, b.shape)))
	}
	if g.dt == Float32 && convOneDNN {
		return conv(g, x, w, b, win, act)
	}
	k := win.kh * win.kw * win.c
	var cols *Node
	if win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 {
		cols = Reshape(x, win.b*win.h*win.w, win.c)
	} else {
		cols = g.add(opIm2Col, []int{win.b * win.oh * win.ow, k}, x)
		cols.win = win
	}
	y := Dense(cols, Reshape(w, k, cout), b, act)
	return Reshape(y, win.b, win.oh, win.ow, cout)
}

func im2colGrad(n, dy *Node) []*Node {
	d := n.g.add(opCol2Im, n.in[0].shape, dy)
	d.win = n.win
	return []*Node{d}
}

// windowKernel is the kernel of a window op computing out from its one
// input with f: im2col, col2im, the average pool and its gradient.
func windowKernel[T Float](f func(out, in []T, w *window)) kernelFunc[T] {
	return func(n *Node, in [][]T, out []T, _ map[int][]int) func() {
		x, w := in[0], n.win
		return func() { f(out, x, w) }
	}
}

// im2col is: cols[(b,oy,ox), (ki,kj,c)] = x[b, oy·sh-padT+ki·dh, ox·sw-padL+kj·dw, c],
// zero where the window leaves the image.
func im2col[T Float](cols, x []T, w *window) {
	k := w.kh * w.kw * w.c
	row := 0
	for b := 0; b < w.b; b++ {
		img := x[b*w.h*w.w*w.c : (b+1)*w.h*w.w*w.c]
		for oy := 0; oy < w.oh; oy++ {
			for ox := 0; ox < w.ow; ox++ {
				dst := cols[row*k : (row+1)*k]
				row++
				kj0, kj1 := w.validCols(ox)
				for ki := 0; ki < w.kh; ki++ {
					seg := dst[ki*w.kw*w.c : (ki+1)*w.kw*w.c]
					iy := oy*w.sh - w.padT + ki*w.dh
					if iy < 0 || iy >= w.h || kj0 >= kj1 {
						clear(seg)
						continue
					}
					clear(seg[:kj0*w.c])
					clear(seg[kj1*w.c:])
					ix := ox*w.sw - w.padL + kj0*w.dw
					if w.dw == 1 {
						// The window's columns inside the image are contiguous in x.
						copy(seg[kj0*w.c:kj1*w.c], img[(iy*w.w+ix)*w.c:])
						continue
					}
					for kj := kj0; kj < kj1; kj, ix = kj+1, ix+w.dw {
						copy(seg[kj*w.c:(kj+1)*w.c], img[(iy*w.w+ix)*w.c:])
					}
				}
			}
		}
	}
}

// col2im is im2col's adjoint: dx[b,iy,ix,c] = Σ of the cols elements im2col
// copied from it.
func col2im[T Float](dx, cols []T, w *window) {
	clear(dx)
	k := w.kh * w.kw * w.c
	row := 0
	for b := 0; b < w.b; b++ {
		img := dx[b*w.h*w.w*w.c : (b+1)*w.h*w.w*w.c]
		for oy := 0; oy < w.oh; oy++ {
			for ox := 0; ox < w.ow; ox++ {
				src := cols[row*k : (row+1)*k]
				row++
				kj0, kj1 := w.validCols(ox)
				for ki := 0; ki < w.kh; ki++ {
					iy := oy*w.sh - w.padT + ki*w.dh
					if iy < 0 || iy >= w.h || kj0 >= kj1 {
						continue
					}
					ix := ox*w.sw - w.padL + kj0*w.dw
					// loops.AddTo is a vector loop with the bits of d[j] += v.
					if w.dw == 1 {
						d := img[(iy*w.w+ix)*w.c : (iy*w.w+ix+kj1-kj0)*w.c]
						loops.AddTo(d, d, src[(ki*w.kw+kj0)*w.c:(ki*w.kw+kj1)*w.c])
						continue
					}
					for kj := kj0; kj < kj1; kj, ix = kj+1, ix+w.dw {
						d := img[(iy*w.w+ix)*w.c : (iy*w.w+ix+1)*w.c]
						loops.AddTo(d, d, src[(ki*w.kw+kj)*w.c:(ki*w.kw+kj+1)*w.c])
					}
				}
			}
		}
	}
}

// validCols returns the window columns [kj0,kj1) inside the image for output
// column ox: those kj with 0 ≤ ox·sw-padL+kj·dw < w.
func (w *window) validCols(ox int) (kj0, kj1 int) {
	x0 := ox*w.sw - w.padL
	if x0 < 0 {
		kj0 = (-x0 + w.dw - 1) / w.dw
	}
	kj1 = w.kw
	if r := w.w - x0; r <= 0 {
		kj1 = 0
	} else {
		kj1 = min(kj1, (r+w.dw-1)/w.dw)
	}
	return kj0, max(kj0, kj1)
}

// validRows returns the input rows [y0,y1) that output row oy's window
// covers inside the image; the pooling ops use it (no dilation).
func (w *window) validRows(oy int) (y0, y1 int) {
	top := oy*w.sh - w.padT
	y0, y1 = max(0, top), min(w.h, top+w.kh)
	return y0, max(y0, y1)
}

// The convolution ops Conv2D builds in float32 when oneDNN is built in:
// one node per convolution and one per gradient, each a oneDNN
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
