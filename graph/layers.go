package graph

import (
	"fmt"
	"slices"
)

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

// MaxPool2D returns the maximum of each poolH x poolW window of the NHWC
// image x, per channel: shape [b,oh,ow,c]. The kernel records where each
// maximum came from (the first, on ties), and the gradient routes dy there.
// It panics with an error wrapping ErrShape if the shapes, strides or
// padding do not fit.
func MaxPool2D(x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	return pool2D("max_pool2d", opMaxPool, x, poolH, poolW, strideH, strideW, pad)
}

// AvgPool2D returns the mean of each poolH x poolW window of the NHWC image
// x, per channel: shape [b,oh,ow,c]. With Same padding a window that
// overhangs the border averages the pixels inside only, as TensorFlow's
// avg_pool does. The gradient spreads each dy evenly over its window's
// pixels.
// It panics with an error wrapping ErrShape if the shapes, strides or
// padding do not fit.
func AvgPool2D(x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	return pool2D("avg_pool2d", opAvgPool, x, poolH, poolW, strideH, strideW, pad)
}

// pool2D adds the pooling op kind of name op over windows of x.
func pool2D(op string, kind opKind, x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	g := graphOf(op, x)
	win := newWindow(g, op, x.shape, poolH, poolW, strideH, strideW, 1, 1, pad)
	out := g.add(kind, []int{win.b, win.oh, win.ow, win.c}, x)
	out.win = win
	return out
}

// Gather returns the rows of table [v,d] picked by ids (any shape, holding
// row indices as values): shape ids.shape + [d]. The gradient with respect
// to table sums each dy row into the row it was read from; ids get none. An
// id that is not a row index makes Run return an error wrapping *IndexError.
// It panics with an error wrapping ErrShape if table is not a matrix.
func Gather(table, ids *Node) *Node {
	const op = "gather"
	g := graphOf(op, table, ids)
	if len(table.shape) != 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want a table [rows, width], got %v", table.shape)))
	}
	return g.add(opGather, append(slices.Clone(ids.shape), table.shape[1]), table, ids)
}

// IndexError is the error Run returns (wrapped) when Gather meets an id that
// is not a row of its table.
type IndexError struct {
	Pos   int     // position in ids
	Value float64 // the id
	Rows  int     // the table's rows
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("graph: ids[%d]: want an index in [0,%d), got %v", e.Pos, e.Rows, e.Value)
}

// DropoutMask returns a node of the given shape whose elements are 0 with
// probability rate and 1/(1-rate) otherwise, drawn from a counter-based
// random stream: element i depends only on (seed, stream, counter, i). The
// counter is read at each Run from step, a node of two elements (usually a
// Variable advanced by AdvanceCounter between Runs) holding the counter's low
// 24 bits and the rest, which float32 holds exactly. Two Programs with the
// same seed, stream and counter draw the same mask; streams differ per
// replica and per layer. The mask carries no gradient.
// It panics with an error wrapping ErrShape if step does not hold two
// elements or rate is outside [0,1).
func DropoutMask(step *Node, shape []int, rate float64, seed, stream uint64) *Node {
	const op = "dropout_mask"
	g := graphOf(op, step)
	checkDims(op, shape)
	if step.size != 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want a counter of 2 elements, got %v", step.shape)))
	}
	if !(rate >= 0 && rate < 1) {
		panic(shapeErr(g, op, fmt.Sprintf("want a rate in [0,1), got %v", rate)))
	}
	out := g.add(opDropoutMask, shape, step)
	out.rate, out.seed, out.stream = rate, seed, stream
	return out
}

// Dropout returns x times DropoutMask(step, x's shape, rate, seed, stream):
// inverted dropout, so the expected value of each element is unchanged. A
// rate of 0 returns x.
func Dropout(x, step *Node, rate float64, seed, stream uint64) *Node {
	graphOf("dropout", x, step)
	if rate == 0 {
		return x
	}
	return Mul(x, DropoutMask(step, x.shape, rate, seed, stream))
}

// counterLow is the range of a counter's low element: 2^24, the integers
// float32 holds exactly.
const counterLow = 1 << 24

// CounterValue returns the value of a counter kept as DropoutMask reads it.
// It panics with an error wrapping ErrShape if v does not hold 2 elements.
func CounterValue(v *Variable) uint64 {
	checkCounter(v)
	x := v.Value()
	return uint64(x[1])*counterLow + uint64(x[0])
}

// AdvanceCounter adds one to a counter kept as DropoutMask reads it, and
// marks its device mirrors stale. Like every write to a Variable, it must
// not run while a Program reads v.
// It panics with an error wrapping ErrShape if v does not hold 2 elements.
func AdvanceCounter(v *Variable) {
	checkCounter(v)
	v.hostWrite()
	if v.dt == Float32 {
		advance(v.f32)
	} else {
		advance(v.f64)
	}
}

func advance[T Float](x []T) {
	x[0]++
	if x[0] >= counterLow {
		x[0] = 0
		x[1]++
	}
}

func checkCounter(v *Variable) {
	if v.Len() != 2 {
		panic(&Error{Op: "counter " + quote(v.name), Msg: fmt.Sprintf("want 2 elements, got shape %v", v.shape), Err: ErrShape})
	}
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

// Collective joins the Programs of several participants (replicas) at a
// reduction in the middle of their Runs. Calls match by order: the k-th call
// on each participant is one reduction, so every participant must run the
// same collective nodes in the same order (Programs compiled from graphs
// built alike do).
type Collective interface {
	// AllReduceF32 replaces buf, on every participant, by the elementwise
	// sum over participants of the bufs they passed to the matching call,
	// bit-identical everywhere. It blocks until every participant has
	// called. It panics when the reduction is abandoned (a participant
	// failed), and Run turns the panic into its error.
	AllReduceF32(buf []float32)
	// AllReduceF64 is AllReduceF32 for float64 Programs.
	AllReduceF64(buf []float64)
}

// AllReduce returns scale·Σ x over every participant of c, the same on each
// (scale 1 for a sum, 1/n for a mean over n participants). Run calls c in
// the middle of the step, so the rest of the step uses the reduced value.
//
// It is differentiable: the gradient of a cross-participant sum with respect
// to each participant's x is the cross-participant sum of the gradients of
// its output, so the backward node is another AllReduce of dy through c.
// Gradients of a loss summed over participants are then exact when each
// participant sums its gradients with the others' (as a strategy does).
// It panics with an error wrapping ErrGraph if c is nil.
func AllReduce(x *Node, c Collective, scale float64) *Node {
	const op = "all_reduce"
	g := graphOf(op, x)
	if c == nil {
		panic(g.err(op, "want a Collective, got nil", ErrGraph))
	}
	out := g.add(opAllReduce, x.shape, x)
	out.coll, out.factor = c, scale
	return out
}

// Collectives returns the AllReduce nodes the program runs, in the order Run
// reaches them: forward ones, then those of the backward pass.
func (p *Program) Collectives() []*Node {
	var out []*Node
	for _, s := range p.steps {
		if ops[s.n.op].collective {
			out = append(out, s.n)
		}
	}
	return out
}

// The gradients of the layer ops; each is an opDef.grad.

func im2colGrad(n, dy *Node) []*Node {
	d := n.g.add(opCol2Im, n.in[0].shape, dy)
	d.win = n.win
	return []*Node{d}
}

func avgPoolGrad(n, dy *Node) []*Node {
	d := n.g.add(opAvgPoolGrad, n.in[0].shape, dy)
	d.win = n.win
	return []*Node{d}
}

func maxPoolGrad(n, dy *Node) []*Node {
	d := n.g.add(opMaxPoolGrad, n.in[0].shape, n, dy)
	d.win = n.win
	return []*Node{d}
}

func gatherGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opScatterAdd, n.in[0].shape, n.in[1], dy), nil}
}

// dropoutMaskGrad: the mask carries no gradient to its counter.
func dropoutMaskGrad(*Node, *Node) []*Node { return []*Node{nil} }

func maskedSumOpGrad(n, dy *Node) []*Node {
	g, in := n.g, n.in
	return []*Node{
		g.add(opMaskedSumGradX, in[0].shape, in[1], dy),
		g.add(opMaskedSumGradW, in[1].shape, in[0], dy),
	}
}

func allReduceGrad(n, dy *Node) []*Node { return []*Node{AllReduce(dy, n.coll, n.factor)} }
