package graph

// opDef is everything the engine knows about one op kind: its name, where
// its buffer comes from, its CPU kernel, its CUDA kernel, its gradient and
// the facts other passes ask of it. Each op has one entry in ops, so adding
// an op, or a device for it, is one place to fill in instead of one switch
// per concern, and TestOpTable fails when an entry is left incomplete
// (issue 13: an op must not exist on one device only by accident).
type opDef struct {
	// name is the op's name in node names and errors ("matmul").
	name string
	// buf says where the node's buffer comes from; bufStep unless set.
	buf bufKind
	// cpu builds the node's step on the CPU; set exactly for bufStep ops.
	cpu cpuKernel
	// cuda is the node's kernel on an NVIDIA device (CompileOn). The
	// entries leave it nil: under -tags cuda, attachCUDA fills it from
	// cudaKernels (optable_cuda.go), a table in opKind order beside this
	// one, and TestOpTable requires it for every op with a cpu kernel;
	// without the tag it stays nil.
	cuda *cudaKernel
	// grad returns the gradient contribution of dy to each input of n (nil
	// where an input gets none). Nil for ops without inputs, for
	// stop_gradient, and for backward ops (backward set).
	grad func(n, dy *Node) []*Node
	// backward marks ops built only by Gradients that have no gradient of
	// their own: second derivatives are not supported (the package BUG).
	backward bool
	// stopsGradient marks ops through which Gradients does not propagate.
	stopsGradient bool
	// product marks matrix products: their rows can be computed apart
	// (ProductRowsF32) and their step taken out of a Program (Defer).
	product bool
	// collective marks ops that join their peers' Runs (Collectives).
	collective bool
	// hostOnly marks ops with no CUDA kernel on purpose: graphs are built
	// with them only in builds without -tags cuda (the oneDNN
	// convolutions, conv.go; the fused batch norm, batchnorm.go), so a
	// device never meets them.
	hostOnly bool
}

// bufKind is where a node's buffer comes from.
type bufKind uint8

const (
	bufStep  bufKind = iota // a buffer of its own, rewritten by the op's kernel at each Run
	bufFed                  // a buffer of its own, written by Feed (placeholders)
	bufConst                // a buffer of its own, filled once by Compile
	bufVar                  // the Variable's storage, read in place
	bufAlias                // its first input's buffer (no op writes its inputs)
)

// ownsBuffer reports whether Run computes n into a buffer of its own.
func (n *Node) ownsBuffer() bool { return ops[n.op].buf == bufStep }

// allocates reports whether Compile allocates a buffer for n.
func (n *Node) allocates() bool { b := ops[n.op].buf; return b != bufVar && b != bufAlias }

// kernelFunc builds the step computing node n from its inputs' buffers into
// out, once at compile time; the step it returns must not allocate. aux
// holds index state a forward kernel shares with its gradient's kernel
// (max-pool argmax), keyed by the forward node's id; compile builds kernels
// in node order, so the forward entry exists when the gradient asks.
type kernelFunc[T Float] func(n *Node, in [][]T, out []T, aux map[int][]int) func()

// cpuKernel is one generic kernel constructor instantiated for both
// dtypes: Go cannot keep a generic function uninstantiated in a table.
type cpuKernel struct {
	f32 kernelFunc[float32]
	f64 kernelFunc[float64]
}

// cpu pairs the two instantiations of a generic kernel constructor; call it
// as cpu(k, k) and type inference instantiates each.
func cpu(f32 kernelFunc[float32], f64 kernelFunc[float64]) cpuKernel {
	return cpuKernel{f32: f32, f64: f64}
}

// cpuFor returns k's constructor for T, nil if k is empty. It runs at
// compile time only, so the type switch costs a Run nothing.
func cpuFor[T Float](k cpuKernel) kernelFunc[T] {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(k.f32).(kernelFunc[T])
	}
	return any(k.f64).(kernelFunc[T])
}

// ops holds every op's entry, indexed by opKind.
//
// It is filled by init rather than by its declaration because gradients
// build nodes whose names and errors read ops, which Go's initialization
// order would reject as a cycle.
var ops [numOps]opDef

func init() {
	ops = [numOps]opDef{
		opPlaceholder:  {name: "placeholder", buf: bufFed},
		opVar:          {name: "var", buf: bufVar},
		opConst:        {name: "const", buf: bufConst},
		opMatMul:       {name: "matmul", cpu: cpu(matMulKernel, matMulKernel), grad: matMulGrad, product: true},
		opDense:        {name: "dense", cpu: cpu(denseKernel, denseKernel), grad: denseGrad},
		opActivate:     {name: "activate", cpu: cpu(activateKernel, activateKernel), grad: activateGrad},
		opAdd:          {name: "add", cpu: cpu(addKernel, addKernel), grad: addGrad},
		opSub:          {name: "sub", cpu: cpu(subKernel, subKernel), grad: subGrad},
		opMul:          {name: "mul", cpu: cpu(mulKernel, mulKernel), grad: mulGrad},
		opDiv:          {name: "div", cpu: cpu(divKernel, divKernel), grad: divGrad},
		opScale:        {name: "scale", cpu: cpu(scaleKernel, scaleKernel), grad: scaleGrad},
		opNeg:          {name: "neg", cpu: cpu(negKernel, negKernel), grad: negGrad},
		opExp:          {name: "exp", cpu: cpu(expKernel, expKernel), grad: expGrad},
		opLog:          {name: "log", cpu: cpu(logKernel, logKernel), grad: logGrad},
		opSquare:       {name: "square", cpu: cpu(squareKernel, squareKernel), grad: squareGrad},
		opSqrt:         {name: "sqrt", cpu: cpu(sqrtKernel, sqrtKernel), grad: sqrtGrad},
		opSoftmax:      {name: "softmax", cpu: cpu(softmaxKernel, softmaxKernel), grad: softmaxOpGrad},
		opLogSoftmax:   {name: "log_softmax", cpu: cpu(logSoftmaxKernel, logSoftmaxKernel), grad: logSoftmaxOpGrad},
		opSparseXent:   {name: "sparse_softmax_cross_entropy", cpu: cpu(sparseXentKernel, sparseXentKernel), grad: sparseXentOpGrad},
		opSoftmaxXent:  {name: "softmax_cross_entropy", cpu: cpu(softmaxXentKernel, softmaxXentKernel), grad: softmaxXentOpGrad},
		opSigmoidXent:  {name: "sigmoid_cross_entropy", cpu: cpu(sigmoidXentKernel, sigmoidXentKernel), grad: sigmoidXentOpGrad},
		opSum:          {name: "sum", cpu: cpu(sumKernel, sumKernel), grad: sumGrad},
		opMean:         {name: "mean", cpu: cpu(meanKernel, meanKernel), grad: meanGrad},
		opSumAxis:      {name: "sum_axis", cpu: cpu(sumAxisKernel, sumAxisKernel), grad: sumAxisGrad},
		opReshape:      {name: "reshape", buf: bufAlias, grad: reshapeGrad},
		opStopGradient: {name: "stop_gradient", buf: bufAlias, stopsGradient: true},

		// Backward ops, built by Gradients. Those with a grad are
		// differentiable because forward graphs use them too (a copy, a sum
		// of contributions, broadcasts).
		opAddN:            {name: "add_n", cpu: cpu(addNKernel, addNKernel), grad: addNGrad},
		opActGradY:        {name: "activate_grad", cpu: cpu(actGradYKernel, actGradYKernel), backward: true},
		opActGradX:        {name: "activate_grad", cpu: cpu(actGradXKernel, actGradXKernel), backward: true},
		opSoftmaxGrad:     {name: "softmax_grad", cpu: cpu(softmaxGradKernel, softmaxGradKernel), backward: true},
		opLogSoftmaxGrad:  {name: "log_softmax_grad", cpu: cpu(logSoftmaxGradKernel, logSoftmaxGradKernel), backward: true},
		opSparseXentGrad:  {name: "sparse_softmax_cross_entropy_grad", cpu: cpu(sparseXentGradKernel, sparseXentGradKernel), backward: true},
		opSoftmaxXentGrad: {name: "softmax_cross_entropy_grad", cpu: cpu(softmaxXentGradKernel, softmaxXentGradKernel), backward: true},
		opXentLabelGrad:   {name: "softmax_cross_entropy_label_grad", cpu: cpu(xentLabelGradKernel, xentLabelGradKernel), backward: true},
		opSigmoidXentGrad: {name: "sigmoid_cross_entropy_grad", cpu: cpu(sigmoidXentGradKernel, sigmoidXentGradKernel), backward: true},
		opBroadcastScalar: {name: "broadcast", cpu: cpu(broadcastScalarKernel, broadcastScalarKernel), grad: broadcastScalarGrad},
		opBroadcastAxis:   {name: "broadcast_axis", cpu: cpu(broadcastAxisKernel, broadcastAxisKernel), grad: broadcastAxisGrad},
		opCopy:            {name: "copy", cpu: cpu(copyKernel, copyKernel), grad: copyGrad},
		opFill:            {name: "zeros", cpu: cpu(fillKernel, fillKernel), backward: true},

		// Layer ops (layers.go, layers_exec.go).
		opIm2Col:         {name: "im2col", cpu: cpu(windowKernel(im2col[float32]), windowKernel(im2col[float64])), grad: im2colGrad},
		opCol2Im:         {name: "col2im", cpu: cpu(windowKernel(col2im[float32]), windowKernel(col2im[float64])), backward: true},
		opMaxPool:        {name: "max_pool", cpu: cpu(maxPoolKernel, maxPoolKernel), grad: maxPoolGrad},
		opMaxPoolGrad:    {name: "max_pool_grad", cpu: cpu(maxPoolGradKernel, maxPoolGradKernel), backward: true},
		opAvgPool:        {name: "avg_pool", cpu: cpu(windowKernel(avgPool[float32]), windowKernel(avgPool[float64])), grad: avgPoolGrad},
		opAvgPoolGrad:    {name: "avg_pool_grad", cpu: cpu(windowKernel(avgPoolSpread[float32]), windowKernel(avgPoolSpread[float64])), backward: true},
		opGather:         {name: "gather", cpu: cpu(gatherKernel, gatherKernel), grad: gatherGrad},
		opScatterAdd:     {name: "scatter_add", cpu: cpu(scatterAddKernel, scatterAddKernel), backward: true},
		opDropoutMask:    {name: "dropout_mask", cpu: cpu(dropoutMaskKernel, dropoutMaskKernel), grad: dropoutMaskGrad},
		opMaskedSum:      {name: "masked_sum", cpu: cpu(maskedSumKernel, maskedSumKernel), grad: maskedSumOpGrad},
		opMaskedSumGradX: {name: "masked_sum_grad", cpu: cpu(maskedSumGradXKernel, maskedSumGradXKernel), backward: true},
		opMaskedSumGradW: {name: "masked_sum_weight_grad", cpu: cpu(maskedSumGradWKernel, maskedSumGradWKernel), backward: true},
		opAllReduce:      {name: "all_reduce", cpu: cpu(allReduceKernel, allReduceKernel), grad: allReduceGrad, collective: true},
		// Convolutions through oneDNN (conv.go); never on a device.
		opConv:           {name: "conv2d", cpu: cpu(convKernel, convKernel), grad: convGrad, hostOnly: true},
		opConvGradInput:  {name: "conv2d_input_grad", cpu: cpu(convGradInputKernel, convGradInputKernel), backward: true, hostOnly: true},
		opConvGradFilter: {name: "conv2d_filter_grad", cpu: cpu(convGradFilterKernel, convGradFilterKernel), backward: true, hostOnly: true},

		// Element-wise and reduction ops (issue 22).
		opMaxElem:            {name: "maximum", cpu: cpu(maxElemKernel, maxElemKernel), grad: maxElemGrad},
		opMinElem:            {name: "minimum", cpu: cpu(minElemKernel, minElemKernel), grad: minElemGrad},
		opGreater:            {name: "greater", cpu: cpu(greaterKernel, greaterKernel), stopsGradient: true},
		opGreaterEqual:       {name: "greater_equal", cpu: cpu(greaterEqualKernel, greaterEqualKernel), stopsGradient: true},
		opLess:               {name: "less", cpu: cpu(lessKernel, lessKernel), stopsGradient: true},
		opLessEqual:          {name: "less_equal", cpu: cpu(lessEqualKernel, lessEqualKernel), stopsGradient: true},
		opEqual:              {name: "equal", cpu: cpu(equalKernel, equalKernel), stopsGradient: true},
		opWhere:              {name: "where", cpu: cpu(whereKernel, whereKernel), grad: whereGrad},
		opSumTo:              {name: "sum_axes", cpu: cpu(sumToKernel, sumToKernel), grad: sumToGrad},
		opBroadcastTo:        {name: "broadcast_to", cpu: cpu(broadcastToKernel, broadcastToKernel), grad: broadcastToGrad},
		opMaxAxis:            {name: "max_axis", cpu: cpu(maxAxisKernel, maxAxisKernel), grad: extremeAxisGrad},
		opMinAxis:            {name: "min_axis", cpu: cpu(minAxisKernel, minAxisKernel), grad: extremeAxisGrad},
		opExtremeAxisGrad:    {name: "extreme_axis_grad", cpu: cpu(extremeAxisGradKernel, extremeAxisGradKernel), backward: true},
		opSoftmaxAxis:        {name: "softmax_axis", cpu: cpu(softmaxAxisKernel, softmaxAxisKernel), grad: softmaxAxisGrad},
		opLogSoftmaxAxis:     {name: "log_softmax_axis", cpu: cpu(logSoftmaxAxisKernel, logSoftmaxAxisKernel), grad: logSoftmaxAxisGrad},
		opSoftmaxAxisGrad:    {name: "softmax_axis_grad", cpu: cpu(softmaxAxisGradKernel, softmaxAxisGradKernel), backward: true},
		opLogSoftmaxAxisGrad: {name: "log_softmax_axis_grad", cpu: cpu(logSoftmaxAxisGradKernel, logSoftmaxAxisGradKernel), backward: true},
		// Shape, product, normalization and attention ops (issue 22).
		opBatchMatMul:       {name: "batch_matmul", cpu: cpu(batchMatMulKernel, batchMatMulKernel), grad: batchMatMulGrad},
		opTranspose:         {name: "transpose", cpu: cpu(transposeKernel, transposeKernel), grad: transposeGrad},
		opSlice:             {name: "slice", cpu: cpu(sliceKernel, sliceKernel), grad: sliceGrad},
		opSliceGrad:         {name: "slice_grad", cpu: cpu(sliceGradKernel, sliceGradKernel), grad: sliceGradGrad},
		opConcat:            {name: "concat", cpu: cpu(concatKernel, concatKernel), grad: concatGrad},
		opCausalMask:        {name: "causal_mask", cpu: cpu(causalMaskKernel, causalMaskKernel), grad: causalMaskGrad},
		opNormStats:         {name: "norm_stats", cpu: cpu(normStatsKernel, normStatsKernel), stopsGradient: true},
		opNorm:              {name: "norm", cpu: cpu(normKernel, normKernel), grad: normGrad},
		opNormGrad:          {name: "norm_grad", cpu: cpu(normGradKernel, normGradKernel), backward: true},
		opNormGammaGrad:     {name: "norm_gamma_grad", cpu: cpu(normGammaGradKernel, normGammaGradKernel), backward: true},
		opCausalSoftmax:     {name: "causal_softmax", cpu: cpu(causalSoftmaxKernel, causalSoftmaxKernel), grad: causalSoftmaxGrad},
		opCausalSoftmaxGrad: {name: "causal_softmax_grad", cpu: cpu(causalSoftmaxGradKernel, causalSoftmaxGradKernel), backward: true},
		// Self-attention on packed projections (selfattention.go).
		opSelfAttnWeights:    {name: "self_attention_weights", cpu: cpu(selfAttnWeightsKernel, selfAttnWeightsKernel), stopsGradient: true},
		opSelfAttn:           {name: "self_attention", cpu: cpu(selfAttnKernel, selfAttnKernel), grad: selfAttnGrad},
		opSelfAttnScoresGrad: {name: "self_attention_scores_grad", cpu: cpu(selfAttnScoresGradKernel, selfAttnScoresGradKernel), backward: true},
		opSelfAttnGrad:       {name: "self_attention_grad", cpu: cpu(selfAttnGradKernel, selfAttnGradKernel), backward: true},
		// Batch norm (batchnorm.go); cuda builds compose it of the ops above.
		opBatchNormSums:     {name: "batch_norm_sums", cpu: cpu(batchNormSumsKernel, batchNormSumsKernel), stopsGradient: true, hostOnly: true},
		opBatchNorm:         {name: "batch_norm", cpu: cpu(batchNormKernel, batchNormKernel), grad: batchNormGrad, hostOnly: true},
		opBatchNormGradSums: {name: "batch_norm_grad_sums", cpu: cpu(batchNormGradSumsKernel, batchNormGradSumsKernel), backward: true, hostOnly: true},
		opBatchNormGrad:     {name: "batch_norm_grad", cpu: cpu(batchNormGradKernel, batchNormGradKernel), backward: true, hostOnly: true},
	}
	attachCUDA()
}
