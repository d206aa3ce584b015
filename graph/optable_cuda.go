//go:build cuda

package graph

import (
	"math"

	"github.com/gotrain/gotrain/gpu"
)

// cudaKernel is an op's kernel on an NVIDIA device, the slot opDef.cuda
// holds: plan builds, once at compile time, the launches that compute node
// n from its inputs' device buffers, as a CPU kernelFunc builds its loop.
type cudaKernel struct {
	plan func(b *devBuilder, n *Node) (func() error, error)
	// aux asks for one int64 of index state per output element, which the
	// op's gradient reads through devBuilder.auxOf (max-pool's argmax).
	aux bool
	// words, if set, is how many parameter words plan puts in n's slot
	// when that can exceed slotWords (batched gemm's pointer arrays).
	words func(n *Node) int
}

// cudaSource is one CUDA C source of kernels_cuda.go with the name NVRTC's
// errors give it.
type cudaSource struct{ name, text string }

var (
	elementwise = cudaSource{"elementwise", elementwiseSrc}
	reductions  = cudaSource{"reduce", reduceSrc}
	rowKernels  = cudaSource{"rows", rowsSrc}
	layerSrc    = cudaSource{"layers", layersSrc}
)

// cudaKernels pairs with ops: every op with a CPU kernel has a CUDA kernel
// here, in opKind order (TestOpTable checks it under -tags cuda). It is
// attached to ops by attachCUDA, at the end of ops' init.
var cudaKernels = [numOps]*cudaKernel{
	opMatMul:          {plan: matMulCUDA},
	opDense:           {plan: denseCUDA},
	opActivate:        {plan: activateCUDA},
	opAdd:             {plan: binaryCUDA(0)},
	opSub:             {plan: binaryCUDA(1)},
	opMul:             {plan: binaryCUDA(2)},
	opDiv:             {plan: binaryCUDA(3)},
	opScale:           {plan: unaryCUDA(0)},
	opNeg:             {plan: unaryCUDA(1)},
	opExp:             {plan: unaryCUDA(2)},
	opLog:             {plan: unaryCUDA(3)},
	opSquare:          {plan: unaryCUDA(4)},
	opSqrt:            {plan: unaryCUDA(5)},
	opSoftmax:         {plan: softmaxCUDA(false)},
	opLogSoftmax:      {plan: softmaxCUDA(true)},
	opSparseXent:      {plan: sparseXentCUDA},
	opSoftmaxXent:     {plan: softmaxXentCUDA},
	opSigmoidXent:     {plan: sigmoidXentCUDA},
	opSum:             {plan: sumCUDA(false)},
	opMean:            {plan: sumCUDA(true)},
	opSumAxis:         {plan: sumAxisCUDA},
	opAddN:            {plan: addNCUDA},
	opActGradY:        {plan: actGradYCUDA},
	opActGradX:        {plan: actGradXCUDA},
	opSoftmaxGrad:     {plan: softmaxGradCUDA("gt_softmax_grad")},
	opLogSoftmaxGrad:  {plan: softmaxGradCUDA("gt_log_softmax_grad")},
	opSparseXentGrad:  {plan: sparseXentGradCUDA},
	opSoftmaxXentGrad: {plan: softmaxXentGradCUDA},
	opXentLabelGrad:   {plan: xentLabelGradCUDA},
	opSigmoidXentGrad: {plan: sigmoidXentGradCUDA},
	opBroadcastScalar: {plan: broadcastScalarCUDA},
	opBroadcastAxis:   {plan: broadcastAxisCUDA},
	opCopy:            {plan: copyCUDA},
	opFill:            {plan: fillCUDA},
	opIm2Col:          {plan: windowCUDA("gt_im2col")},
	opCol2Im:          {plan: windowCUDA("gt_col2im")},
	opMaxPool:         {plan: maxPoolCUDA, aux: true},
	opMaxPoolGrad:     {plan: maxPoolGradCUDA},
	opAvgPool:         {plan: windowCUDA("gt_avg_pool")},
	opAvgPoolGrad:     {plan: windowCUDA("gt_avg_pool_grad")},
	opGather:          {plan: gatherCUDA},
	opScatterAdd:      {plan: scatterAddCUDA},
	opDropoutMask:     {plan: dropoutMaskCUDA},
	opMaskedSum:       {plan: maskedSumCUDA},
	opMaskedSumGradX:  {plan: maskedSumGradXCUDA},
	opMaskedSumGradW:  {plan: maskedSumGradWCUDA},
	opAllReduce:       {plan: allReduceCUDA},

	// Element-wise and reduction ops (issue 22).
	opMaxElem:            {plan: bcastCUDA(4)},
	opMinElem:            {plan: bcastCUDA(5)},
	opGreater:            {plan: bcastCUDA(6)},
	opGreaterEqual:       {plan: bcastCUDA(7)},
	opLess:               {plan: bcastCUDA(8)},
	opLessEqual:          {plan: bcastCUDA(9)},
	opEqual:              {plan: bcastCUDA(10)},
	opWhere:              {plan: whereCUDA},
	opSumTo:              {plan: sumToCUDA},
	opBroadcastTo:        {plan: broadcastToCUDA},
	opMaxAxis:            {plan: extremeAxisCUDA(0)},
	opMinAxis:            {plan: extremeAxisCUDA(1)},
	opExtremeAxisGrad:    {plan: extremeAxisGradCUDA},
	opSoftmaxAxis:        {plan: softmaxAxisCUDA(0)},
	opLogSoftmaxAxis:     {plan: softmaxAxisCUDA(1)},
	opSoftmaxAxisGrad:    {plan: softmaxAxisGradCUDA(0)},
	opLogSoftmaxAxisGrad: {plan: softmaxAxisGradCUDA(1)},
	// Shape, product, normalization and attention ops (issue 22).
	opBatchMatMul:       {plan: batchMatMulCUDA, words: batchMatMulWords},
	opTranspose:         {plan: transposeCUDA, words: transposeWords},
	opSlice:             {plan: sliceCUDA},
	opSliceGrad:         {plan: sliceGradCUDA},
	opConcat:            {plan: concatCUDA},
	opCausalMask:        {plan: causalMaskCUDA},
	opNormStats:         {plan: normStatsCUDA},
	opNorm:              {plan: normCUDA},
	opNormGrad:          {plan: normGradCUDA},
	opNormGammaGrad:     {plan: normGammaGradCUDA},
	opCausalSoftmax:     {plan: causalSoftmaxCUDA("gt_causal_softmax")},
	opCausalSoftmaxGrad: {plan: causalSoftmaxCUDA("gt_causal_softmax_grad")},
	// Self-attention on packed projections (selfattention_cuda.go).
	opSelfAttnWeights:    {plan: selfAttnWeightsCUDA, words: selfAttnWords(1)},
	opSelfAttn:           {plan: selfAttnCUDA, words: selfAttnWords(1)},
	opSelfAttnScoresGrad: {plan: selfAttnScoresGradCUDA, words: selfAttnWords(1)},
	opSelfAttnGrad:       {plan: selfAttnGradCUDA, words: selfAttnWords(3)},
}

func attachCUDA() {
	for op := range ops {
		ops[op].cuda = cudaKernels[op]
	}
}

// devBuilder is what a cudaKernel's plan builds node n's step from: its
// buffers, its parameter slot and flag in the arena, and its kernels.
type devBuilder struct {
	d     *devProgram
	n     *Node
	step  int       // index of n's step
	words []float64 // n's parameter slot on the host, uploaded after planning
	slot  gpu.Ptr   // the slot on the device
	used  int       // words of the slot used
	flag  gpu.Ptr   // n's label flag
}

func (b *devBuilder) in(i int) gpu.Ptr { return b.d.bufs[b.n.in[i].id] }
func (b *devBuilder) out() gpu.Ptr     { return b.d.bufs[b.n.id] }

// auxOf returns the index state of node m (a forward node of n's).
func (b *devBuilder) auxOf(m *Node) gpu.Ptr { return b.d.aux[m.id] }

// doubles puts vals in n's parameter slot and returns their address:
// kernels take float scalars through a device buffer.
func (b *devBuilder) doubles(vals ...float64) gpu.Ptr {
	p := b.slot.Add(b.used * 8)
	copy(b.words[b.used:], vals)
	b.used += len(vals)
	return p
}

// ints puts vals in n's parameter slot as int64s and returns their address.
func (b *devBuilder) ints(vals ...int) gpu.Ptr {
	p := b.slot.Add(b.used * 8)
	for i, v := range vals {
		b.words[b.used+i] = math.Float64frombits(uint64(int64(v)))
	}
	b.used += len(vals)
	return p
}

// window puts w's geometry in n's slot, in the order layersSrc reads it.
func (b *devBuilder) window(w *window) gpu.Ptr {
	return b.ints(w.b, w.h, w.w, w.c, w.kh, w.kw, w.sh, w.sw, w.padT, w.padL, w.oh, w.ow, w.dh, w.dw)
}

// check returns n's flag and registers it with Run: its kernel checks the
// labels or ids in ids against bound.
func (b *devBuilder) check(ids *Node, bound int, label bool) gpu.Ptr {
	b.d.checks = append(b.d.checks, devCheck{step: b.step, ids: ids, bound: bound, label: label})
	return b.flag
}

// kernel returns a launch of kernel name from src over threads threads
// (none when threads is 0) with args, compiling src on first use.
func (b *devBuilder) kernel(src cudaSource, name string, threads int, args ...any) (func() error, error) {
	if threads == 0 {
		return func() error { return nil }, nil
	}
	mod, err := loadModule(b.d.dev, b.d.p.dt, src.name, src.text)
	if err != nil {
		return nil, err
	}
	f, err := mod.Function(name)
	if err != nil {
		return nil, err
	}
	grid, blk := gpu.Linear(threads, 256)
	s := b.d.s
	return func() error { return f.Launch(s, grid, blk, args...) }, nil
}

// gemm returns c = op(a)·op(b) in n's dtype through cuBLAS, as gemmFor's
// BLAS call computes it on the CPU.
func (b *devBuilder) gemm(transA, transB bool, m, n, k int, a gpu.Ptr, lda int, bm gpu.Ptr, ldb int, c gpu.Ptr, ldc int) (func() error, error) {
	s := b.d.s
	switch {
	case m == 0 || n == 0:
		return func() error { return nil }, nil
	case k == 0:
		words := m * n * b.d.p.dt.size() / 4
		return func() error { return s.Memset32(c, 0, words) }, nil
	}
	h, err := b.d.handle()
	if err != nil {
		return nil, err
	}
	if b.d.p.dt == Float32 {
		return func() error { return h.Gemm32(transA, transB, m, n, k, 1, a, lda, bm, ldb, 0, c, ldc) }, nil
	}
	return func() error { return h.Gemm64(transA, transB, m, n, k, 1, a, lda, bm, ldb, 0, c, ldc) }, nil
}

// seq runs fs in order, stopping at the first error.
func seq(fs ...func() error) func() error {
	return func() error {
		for _, f := range fs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}

// The CUDA kernels' plans, in the order of cudaKernels. Each mirrors the
// CPU kernel of the same op in exec.go or layers_exec.go.

func matMulCUDA(b *devBuilder, n *Node) (func() error, error) {
	m, nn := n.shape[0], n.shape[1]
	k, lda, ldb := n.in[0].shape[1], n.in[0].shape[1], n.in[1].shape[1]
	if n.transA {
		k = n.in[0].shape[0]
	}
	return b.gemm(n.transA, n.transB, m, nn, k, b.in(0), lda, b.in(1), ldb, b.out(), nn)
}

func denseCUDA(b *devBuilder, n *Node) (func() error, error) {
	m, k, nn := n.in[0].shape[0], n.in[0].shape[1], n.shape[1]
	mm, err := b.gemm(false, false, m, nn, k, b.in(0), k, b.in(1), nn, b.out(), nn)
	if err != nil {
		return nil, err
	}
	var bias gpu.Ptr // none: the kernel adds no bias
	if len(n.in) == 3 {
		bias = b.in(2)
	} else if n.act == Linear {
		return mm, nil
	}
	ba, err := b.kernel(elementwise, "gt_bias_act", n.size, b.out(), bias, n.size, nn, int(n.act))
	if err != nil {
		return nil, err
	}
	return seq(mm, ba), nil
}

func activateCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_activate", n.size, b.out(), b.in(0), n.size, int(n.act))
}

// binaryCUDA is binaryKernel for op 0 add, 1 sub, 2 mul, 3 div; general
// broadcasts go to bcastCUDA.
func binaryCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		if n.mode == bGeneral {
			return bcastCUDA(op)(b, n)
		}
		la, lb := n.in[0].size, n.in[1].size
		ka, kb := 0, 0
		switch n.mode {
		case bScalarA:
			ka = 1
		case bScalarB:
			kb = 1
		case bVecA:
			ka = 2
		case bVecB:
			kb = 2
		}
		return b.kernel(elementwise, "gt_binary", n.size, b.out(), b.in(0), b.in(1), n.size, ka, la, kb, lb, op)
	}
}

// unaryCUDA is the elementwise ops of one input: 0 scale, 1 neg, 2 exp,
// 3 log, 4 square, 5 sqrt, 6 maximum.
func unaryCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel(elementwise, "gt_unary", n.size, b.out(), b.in(0), n.size, op, b.doubles(n.factor))
	}
}

func softmaxCUDA(log bool) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		c := n.shape[len(n.shape)-1]
		if c == 0 {
			return func() error { return nil }, nil
		}
		lg := 0
		if log {
			lg = 1
		}
		return b.kernel(rowKernels, "gt_softmax", n.size/c, b.out(), b.in(0), n.size/c, c, lg)
	}
}

func sparseXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel(rowKernels, "gt_sparse_xent", rows, b.out(), b.in(0), b.in(1), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel(rowKernels, "gt_softmax_xent", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_sigmoid_xent", n.size, b.out(), b.in(0), b.in(1), n.size)
}

func sumCUDA(mean bool) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		x := n.in[0].size
		f := 1.0
		if mean && x > 0 {
			f = 1 / float64(x)
		}
		return b.kernel(reductions, "gt_sum", 1, b.out(), b.in(0), x, b.doubles(f))
	}
}

func sumAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.in[0].shape, n.axis)
	return b.kernel(reductions, "gt_sum_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}

// addNCUDA is addNKernel: a copy of the first input, then each other added
// in turn, so the sums round as the CPU's do.
func addNCUDA(b *devBuilder, n *Node) (func() error, error) {
	first, err := b.kernel(elementwise, "gt_copy", n.size, b.out(), b.in(0), n.size)
	if err != nil {
		return nil, err
	}
	fs := []func() error{first}
	for i := 1; i < len(n.in); i++ {
		f, err := b.kernel(elementwise, "gt_acc", n.size, b.out(), b.in(i), n.size)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return seq(fs...), nil
}

func actGradYCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_act_grad_y", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}

func actGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_act_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}

func softmaxGradCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		c := n.shape[len(n.shape)-1]
		if c == 0 {
			return func() error { return nil }, nil
		}
		return b.kernel(rowKernels, name, n.size/c, b.out(), b.in(0), b.in(1), n.size/c, c)
	}
}

// causalSoftmaxCUDA plans gt_causal_softmax (x) or its gradient (y, dy),
// one thread per row of tk.
func causalSoftmaxCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		r := len(n.shape)
		tq, tk := n.shape[r-2], n.shape[r-1]
		if n.size == 0 {
			return func() error { return nil }, nil
		}
		rows := n.size / tk
		args := []any{b.out(), b.in(0)}
		if len(n.in) == 2 {
			args = append(args, b.in(1))
		}
		return b.kernel(rowKernels, name, rows, append(args, rows, tq, tk)...)
	}
}

func sparseXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_sparse_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_softmax_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c)
}

func xentLabelGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_xent_label_grad", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_sigmoid_xent_grad", n.size, b.out(), b.in(0), b.in(1), b.in(2), n.size)
}

func broadcastScalarCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_broadcast_scalar", n.size, b.out(), b.in(0), n.size, b.doubles(n.factor))
}

func broadcastAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.shape, n.axis)
	return b.kernel(elementwise, "gt_broadcast_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}

func copyCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_copy", n.size, b.out(), b.in(0), n.size)
}

func fillCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_fill", n.size, b.out(), n.size, b.doubles(n.value))
}

// windowCUDA is im2col, col2im and the average pool and its gradient: one
// thread per output element.
func windowCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel(layerSrc, name, n.size, b.out(), b.in(0), n.size, b.window(n.win))
	}
}

func maxPoolCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(layerSrc, "gt_max_pool", n.size, b.out(), b.auxOf(n), b.in(0), n.size, b.window(n.win))
}

func maxPoolGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(layerSrc, "gt_max_pool_grad", n.size, b.out(), b.auxOf(n.in[0]), b.in(1), n.size, b.window(n.win))
}

func gatherCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.in[0].shape[1], n.in[0].shape[0]
	return b.kernel(layerSrc, "gt_gather", n.size, b.out(), b.in(0), b.in(1), n.size, d, rows, b.check(n.in[1], rows, false))
}

func scatterAddCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.shape[1], n.shape[0]
	return b.kernel(layerSrc, "gt_scatter_add", d, b.out(), b.in(0), b.in(1), n.in[0].size, d, rows, b.check(n.in[0], rows, false))
}

func dropoutMaskCUDA(b *devBuilder, n *Node) (func() error, error) {
	thr := uint64(n.rate * (1 << 53))
	keep := b.doubles(1 / (1 - n.rate))
	return b.kernel(elementwise, "gt_dropout_mask", n.size, b.out(), b.in(0), n.size, thr, n.seed, n.stream, keep)
}

func maskedSumCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.shape[0], n.in[1].size
	if c == 0 || rows == 0 {
		return b.kernel(elementwise, "gt_fill", n.size, b.out(), n.size, b.doubles(0))
	}
	return b.kernel(reductions, "gt_masked_sum", c, b.out(), b.in(0), b.in(1), c, n.in[0].size/rows, rows)
}

func maskedSumGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.in[0].size
	if c == 0 || rows == 0 {
		return func() error { return nil }, nil
	}
	return b.kernel(reductions, "gt_masked_sum_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, c, n.size/rows)
}

func maskedSumGradWCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.size
	per := 0
	if rows > 0 {
		per = n.in[0].size / rows
	}
	return b.kernel(reductions, "gt_masked_sum_grad_w", rows, b.out(), b.in(0), b.in(1), rows, max(c, 1), per)
}

// allReduceCUDA joins the Collective through the host: the step's input is
// copied to a host buffer kept for the program's life, reduced and scaled
// there as allReduceKernel does, and copied back into the node's buffer.
func allReduceCUDA(b *devBuilder, n *Node) (func() error, error) {
	s, in, out, c := b.d.s, b.in(0), b.out(), n.coll
	if b.d.p.dt == Float32 {
		buf, scale := make([]float32, n.size), float32(n.factor)
		return func() error { return hostReduce(s, buf, in, out, scale, c.AllReduceF32) }, nil
	}
	buf := make([]float64, n.size)
	return func() error { return hostReduce(s, buf, in, out, n.factor, c.AllReduceF64) }, nil
}

func hostReduce[T Float](s *gpu.Stream, buf []T, in, out gpu.Ptr, scale T, reduce func([]T)) error {
	if len(buf) == 0 {
		reduce(buf)
		return nil
	}
	if err := gpu.CopyDtoH(s, buf, in); err != nil {
		return err
	}
	reduce(buf)
	if scale != 1 {
		for i := range buf {
			buf[i] *= scale
		}
	}
	return gpu.CopyHtoD(s, out, buf)
}
