package graph

import (
	"fmt"
	"math"

	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/internal/loops"
)

// Float is the element type of the engine's generic code.
type Float interface{ ~float32 | ~float64 }

type gemmFunc[T Float] func(transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int)

// gemmFor picks Sgemm or Dgemm once at compile time, so steps call BLAS
// without a per-call type switch (which would allocate).
func gemmFor[T Float]() gemmFunc[T] {
	var z T
	switch any(z).(type) {
	case float32:
		return any(gemmFunc[float32](blas.Sgemm)).(gemmFunc[T])
	default:
		return any(gemmFunc[float64](blas.Dgemm)).(gemmFunc[T])
	}
}

// compile allocates buffers for the nodes p holds and returns the steps.
func compile[T Float](p *Program, bufs [][]T) []step {
	g := p.g
	var steps []step
	aux := make(map[int][]int) // index state a kernel shares with its gradient (max-pool argmax)
	for id := 0; id < p.nodes; id++ {
		if !p.have[id] {
			continue
		}
		n := g.nodes[id]
		switch ops[n.op].buf {
		case bufVar:
			bufs[id] = varStorage[T](n.v)
			p.vars = append(p.vars, n.v)
			continue
		case bufAlias:
			// No op writes its inputs, so sharing is safe.
			bufs[id] = bufs[n.in[0].id]
			continue
		}
		bufs[id] = make([]T, n.size)
		switch ops[n.op].buf {
		case bufFed:
			continue
		case bufConst:
			fill(bufs[id], T(n.value))
			continue
		}
		steps = append(steps, step{n: n, fn: kernelFor(n, bufs, aux)})
	}
	return steps
}

func varStorage[T Float](v *Variable) []T {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(v.f32).([]T)
	}
	return any(v.f64).([]T)
}

func fill[T Float](x []T, v T) {
	for i := range x {
		x[i] = v
	}
}

// kernelFor returns the closure computing node n from its inputs' buffers,
// built by the op's CPU kernel in ops.
// Shapes were validated when n was built, so the loops are unchecked.
func kernelFor[T Float](n *Node, bufs [][]T, aux map[int][]int) func() {
	out := bufs[n.id]
	in := make([][]T, len(n.in))
	for i, x := range n.in {
		in[i] = bufs[x.id]
	}
	k := cpuFor[T](ops[n.op].cpu)
	if k == nil {
		panic(fmt.Errorf("graph: compile: no kernel for op %s (node %s)", ops[n.op].name, n))
	}
	return k(n, in, out, aux)
}

// The CPU kernels of the ops in ops.go, in the order of opKind. Each is a
// kernelFunc.

func matMulKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	a, b := in[0], in[1]
	m, nn := n.shape[0], n.shape[1]
	k, lda, ldb := n.in[0].shape[1], n.in[0].shape[1], n.in[1].shape[1]
	if n.transA {
		k = n.in[0].shape[0]
	}
	return func() { gemm(n.transA, n.transB, m, nn, k, 1, a, lda, b, ldb, 0, out, nn) }
}

func denseKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	gemm := gemmFor[T]()
	x, w := in[0], in[1]
	var b []T
	if len(in) == 3 {
		b = in[2]
	}
	m, k, nn := n.in[0].shape[0], n.in[0].shape[1], n.shape[1]
	act := n.act
	return func() {
		gemm(false, false, m, nn, k, 1, x, k, w, nn, 0, out, nn)
		biasAct(out, b, nn, act)
	}
}

func activateKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, act := in[0], n.act
	return func() { activate(out, x, act) }
}

// addKernel, subKernel, mulKernel and divKernel run arithKernel's vector
// loops; binaryLoop and bcastBinaryLoop with the same f stay their
// reference, bit for bit.
func addKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpAdd, func(a, b T) T { return a + b })
}

func subKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpSub, func(a, b T) T { return a - b })
}

func mulKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpMul, func(a, b T) T { return a * b })
}

func divKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	return arithKernel(n, in, out, loops.OpDiv, func(a, b T) T { return a / b })
}

func binaryKernel[T Float](n *Node, in [][]T, out []T, f func(a, b T) T) func() {
	a, b := in[0], in[1]
	if n.mode == bGeneral {
		it := newBcastIter(n.shape, n.in[0].shape, n.in[1].shape)
		return func() { bcastBinaryLoop(out, a, b, it, f) }
	}
	la, lb := len(a), len(b)
	mode := n.mode
	return func() { binaryLoop(out, a, b, la, lb, mode, f) }
}

func scaleKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], T(n.factor)
	return func() { loops.ScaleTo(out, c, x) }
}

func negKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = -v
		}
	}
}

func expKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Exp(float64(v)))
		}
	}
}

func logKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Log(float64(v)))
		}
	}
}

func squareKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = v * v
		}
	}
}

func sqrtKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() {
		for i, v := range x {
			out[i] = T(math.Sqrt(float64(v)))
		}
	}
}

func softmaxKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], n.shape[len(n.shape)-1]
	return func() { softmaxRows(out, x, c, false) }
}

func logSoftmaxKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, c := in[0], n.shape[len(n.shape)-1]
	return func() { softmaxRows(out, x, c, true) }
}

func sparseXentKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, c := in[0], in[1], n.in[1].shape[1]
	exps := make([]T, c)
	return func() { sparseXent(out, lab, x, exps, c) }
}

func softmaxXentKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, c := in[0], in[1], n.in[1].shape[1]
	return func() { softmaxXent(out, lab, x, c) }
}

func sigmoidXentKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	z, x := in[0], in[1]
	return func() {
		for i, v := range x {
			xf := float64(v)
			out[i] = T(math.Max(xf, 0) - xf*float64(z[i]) + math.Log1p(math.Exp(-math.Abs(xf))))
		}
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

func addNKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	// in[0] + in[1] + ... in order, each sum a vector loop.
	return func() {
		if len(in) == 1 {
			copy(out, in[0])
			return
		}
		loops.AddTo(out, in[0], in[1])
		for _, x := range in[2:] {
			loops.AddTo(out, out, x)
		}
	}
}

func actGradYKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, act := in[0], in[1], n.act
	return func() { actGradY(out, y, dy, act) }
}

func actGradXKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dy, act := in[0], in[1], n.act
	return func() { actGradX(out, x, dy, act) }
}

func softmaxGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, c := in[0], in[1], n.shape[len(n.shape)-1]
	return func() { softmaxGrad(out, y, dy, c) }
}

func logSoftmaxGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	y, dy, c := in[0], in[1], n.shape[len(n.shape)-1]
	return func() { logSoftmaxGrad(out, y, dy, c) }
}

func sparseXentGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, dl, c := in[0], in[1], in[2], n.shape[1]
	return func() { sparseXentGrad(out, lab, x, dl, c) }
}

func softmaxXentGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	lab, x, dl, c := in[0], in[1], in[2], n.shape[1]
	return func() { softmaxXentGrad(out, lab, x, dl, c) }
}

func xentLabelGradKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dl, c := in[0], in[1], n.shape[1]
	return func() { xentLabelGrad(out, x, dl, c) }
}

func sigmoidXentGradKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	z, x, dl := in[0], in[1], in[2]
	return func() {
		for i, v := range x {
			out[i] = (sigmoid(v) - z[i]) * dl[i]
		}
	}
}

func broadcastScalarKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, f := in[0], n.factor
	return func() { fill(out, T(float64(x[0])*f)) }
}

func broadcastAxisKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	outer, d, inner := axisSplit(n.shape, n.axis)
	f := T(n.factor)
	return func() { broadcastAxisLoop(out, x, outer, d, inner, f) }
}

func copyKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	return func() { copy(out, x) }
}

func fillKernel[T Float](n *Node, _ [][]T, out []T, _ map[int][]int) func() {
	c := T(n.value)
	return func() { fill(out, c) }
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

// vectorMin is the shortest row worth a call into package loops' vector
// loops; shorter rows (a reduction over the last axis has rows of one) stay
// in the inlined loop.
const vectorMin = 32

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

// broadcastAxisLoop is: out[o,k,i] = f · x[o,i].
func broadcastAxisLoop[T Float](out, x []T, outer, d, inner int, f T) {
	for o := 0; o < outer; o++ {
		src := x[o*inner : (o+1)*inner]
		for k := 0; k < d; k++ {
			dst := out[(o*d+k)*inner : (o*d+k+1)*inner]
			for i, v := range src {
				dst[i] = f * v
			}
		}
	}
}

// binaryLoop is: out[i] = f(a[i or i mod la], b[i or i mod lb]) as mode says.
func binaryLoop[T Float](out, a, b []T, la, lb int, mode bcast, f func(a, b T) T) {
	switch mode {
	case bSame:
		for i := range out {
			out[i] = f(a[i], b[i])
		}
	case bScalarA:
		s := a[0]
		for i := range out {
			out[i] = f(s, b[i])
		}
	case bScalarB:
		s := b[0]
		for i := range out {
			out[i] = f(a[i], s)
		}
	case bVecA:
		for r := 0; r < len(out); r += la {
			row, brow := out[r:r+la], b[r:r+la]
			for j := range row {
				row[j] = f(a[j], brow[j])
			}
		}
	case bVecB:
		for r := 0; r < len(out); r += lb {
			row, arow := out[r:r+lb], a[r:r+lb]
			for j := range row {
				row[j] = f(arow[j], b[j])
			}
		}
	}
}

func sigmoid[T Float](x T) T {
	if x >= 0 {
		return T(1 / (1 + math.Exp(-float64(x))))
	}
	e := math.Exp(float64(x))
	return T(e / (1 + e))
}

// biasAct is: for each row r, out[r,j] = act(out[r,j] + b[j]) (b nil: no bias).
// Both happen in one pass over the output, after the matrix product.
func biasAct[T Float](out, b []T, n int, act Activation) {
	switch {
	case b == nil && act == Linear:
		return
	case b == nil:
		activate(out, out, act)
		return
	}
	if n == 0 {
		return
	}
	b = b[:n]
	for r := 0; r+n <= len(out); r += n {
		row := out[r : r+n]
		switch {
		case act == ReLU && n >= vectorMin:
			loops.AddReLU(row, row, b)
		case act == ReLU:
			// The builtin max compiles without a branch; a data-dependent
			// branch mispredicts on about half the elements.
			for j, v := range row {
				row[j] = max(v+b[j], 0)
			}
		case n >= vectorMin:
			loops.AddTo(row, row, b)
		default:
			for j, v := range row {
				row[j] = v + b[j]
			}
		}
		if act != ReLU && act != Linear {
			activate(row, row, act)
		}
	}
}

// activate is: out[i] = act(x[i]).
func activate[T Float](out, x []T, act Activation) {
	switch act {
	case Linear:
		copy(out, x)
	case ReLU:
		for i, v := range x {
			out[i] = max(v, 0)
		}
	case Tanh:
		for i, v := range x {
			out[i] = T(math.Tanh(float64(v)))
		}
	case Sigmoid:
		for i, v := range x {
			out[i] = sigmoid(v)
		}
	case GELU:
		loops.GELU(out, x)
	case GELUTanh:
		for i, v := range x {
			out[i] = T(geluTanh(float64(v)))
		}
	case SiLU:
		for i, v := range x {
			out[i] = T(silu(float64(v)))
		}
	}
}

// actGradY is: out[i] = dy[i] · act'(z[i]) written in terms of y[i] = act(z[i]).
func actGradY[T Float](out, y, dy []T, act Activation) {
	switch act {
	case Linear:
		copy(out, dy)
	case ReLU:
		loops.ReLUGrad(out, y, dy)
	case Tanh:
		for i, v := range y {
			out[i] = dy[i] * (1 - v*v)
		}
	case Sigmoid:
		for i, v := range y {
			out[i] = dy[i] * v * (1 - v)
		}
	}
}

// actGradX is: out[i] = dy[i] · act'(x[i]) for the activations whose
// derivative needs their input (Activation.needsInput); the others'
// derivatives follow from their outputs (actGradY).
func actGradX[T Float](out, x, dy []T, act Activation) {
	var d func(float64) float64
	switch act {
	case GELU:
		loops.GELUGrad(out, x, dy)
		return
	case GELUTanh:
		d = geluTanhGrad
	case SiLU:
		d = siluGrad
	}
	for i, v := range x {
		out[i] = dy[i] * T(d(float64(v)))
	}
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
			// softmax, issue 22).
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

// rowLSE returns max and log Σ exp(row - max) + max.
func rowLSE[T Float](row []T) float64 {
	mx := math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, float64(v))
	}
	var s float64
	for _, v := range row {
		s += math.Exp(float64(v) - mx)
	}
	return mx + math.Log(s)
}

// LabelError is the error Run returns (wrapped) when a sparse label is not a
// class id of the logits.
type LabelError struct {
	Row   int
	Label float64
	Class int // the number of classes
}

func (e *LabelError) Error() string {
	return fmt.Sprintf("graph: row %d: want a label in [0,%d), got %v", e.Row, e.Class, e.Label)
}

func classOf[T Float](l T, row, c int) int {
	k := int(l)
	if T(k) != l || k < 0 || k >= c {
		panic(&LabelError{Row: row, Label: float64(l), Class: c})
	}
	return k
}

// sparseXent is: out[i] = lse(x[i,:]) - x[i,lab[i]], the exponentials
// as softmaxRows takes them (exps: scratch of c).
func sparseXent[T Float](out, lab, x, exps []T, c int) {
	for i := range out {
		row := x[i*c : (i+1)*c]
		k := classOf(lab[i], i, c)
		mx := loops.Max(row)
		lse := float64(mx) + math.Log(float64(loops.ExpSubTo(exps, row, mx)))
		out[i] = T(lse - float64(row[k]))
	}
}

// sparseXentGrad is: out[i,j] = (softmax(x[i,:])[j] - [j == lab[i]]) · dl[i],
// the softmax's exponentials as softmaxRows takes them: a float32 GPT's
// logits are [batch·steps, vocab], and math.Exp was 2-3% of its step
// (issue 22). The CUDA kernel (gt_sparse_xent_grad) computes in double.
func sparseXentGrad[T Float](out, lab, x, dl []T, c int) {
	for i := range dl {
		row, o := x[i*c:(i+1)*c], out[i*c:(i+1)*c]
		k := classOf(lab[i], i, c)
		d := float64(dl[i])
		scale := d / float64(loops.ExpSubTo(o, row, loops.Max(row)))
		for j, e := range o {
			o[j] = T(float64(e) * scale)
		}
		o[k] -= T(d)
	}
}

// softmaxXent is: out[i] = Σⱼ lab[i,j] · (lse(x[i,:]) - x[i,j]).
func softmaxXent[T Float](out, lab, x []T, c int) {
	for i := range out {
		row, l := x[i*c:(i+1)*c], lab[i*c:(i+1)*c]
		lse := rowLSE(row)
		var s float64
		for j, v := range row {
			s += float64(l[j]) * (lse - float64(v))
		}
		out[i] = T(s)
	}
}

// softmaxXentGrad is: out[i,j] = (softmax(x[i,:])[j]·Σₖ lab[i,k] - lab[i,j]) · dl[i].
func softmaxXentGrad[T Float](out, lab, x, dl []T, c int) {
	for i := range dl {
		row, l, o := x[i*c:(i+1)*c], lab[i*c:(i+1)*c], out[i*c:(i+1)*c]
		lse := rowLSE(row)
		var sl float64
		for _, v := range l {
			sl += float64(v)
		}
		d := float64(dl[i])
		for j, v := range row {
			o[j] = T((math.Exp(float64(v)-lse)*sl - float64(l[j])) * d)
		}
	}
}

// xentLabelGrad is: out[i,j] = (lse(x[i,:]) - x[i,j]) · dl[i].
func xentLabelGrad[T Float](out, x, dl []T, c int) {
	for i := range dl {
		row, o := x[i*c:(i+1)*c], out[i*c:(i+1)*c]
		lse := rowLSE(row)
		d := float64(dl[i])
		for j, v := range row {
			o[j] = T((lse - float64(v)) * d)
		}
	}
}
