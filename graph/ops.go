package graph

// opKind names an op; ops (optable.go) holds its entry.
type opKind int

const (
	opPlaceholder opKind = iota
	opVar
	opConst
	opMatMul
	opDense
	opActivate
	opAdd
	opSub
	opMul
	opDiv
	opScale
	opNeg
	opExp
	opLog
	opSquare
	opSqrt
	opSoftmax
	opLogSoftmax
	opSparseXent
	opSoftmaxXent
	opSigmoidXent
	opSum
	opMean
	opSumAxis
	opReshape
	opStopGradient
	// Backward-only ops, built by Gradients.
	opAddN
	opActGradY        // dz from the activation's output y and dy
	opActGradX        // dz from the activation's input x and dy (GELU)
	opSoftmaxGrad     // dx from softmax output y and dy
	opLogSoftmaxGrad  // dx from log-softmax output y and dy
	opSparseXentGrad  // dlogits from labels, logits, dloss
	opSoftmaxXentGrad // dlogits from labels, logits, dloss
	opXentLabelGrad   // dlabels from logits, dloss
	opSigmoidXentGrad // dlogits from labels, logits, dloss
	opBroadcastScalar // scalar to shape, times factor
	opBroadcastAxis   // insert axis, times factor
	opCopy            // a copy with its own buffer
	opFill            // every element value, rewritten by each Run
	// Layer ops (layers.go and its neighbours).
	opIm2Col         // conv patches [b·oh·ow, kh·kw·c]
	opCol2Im         // Im2Col's gradient: patches summed back to the image
	opMaxPool        // window max, argmax kept by the kernel
	opMaxPoolGrad    // dx from the pool's argmax and dy
	opAvgPool        // window mean over the pixels inside the image
	opAvgPoolGrad    // dx: each dy spread evenly over its window
	opGather         // rows of a table picked by ids
	opScatterAdd     // Gather's gradient: dy rows summed into table rows
	opDropoutMask    // 0 or 1/(1-rate) from a counter-based random stream
	opMaskedSum      // Σ_b w[b]·x[b,…,c], per channel
	opMaskedSumGradX // dx[b,…,c] = w[b]·dy[c]
	opMaskedSumGradW // dw[b] = Σ x[b,…,c]·dy[c]
	opAllReduce      // factor·Σ over the participants of a Collective
	// Convolutions through oneDNN, float32 only (conv.go).
	opConv           // act(x ⋆ w + b), act Linear or ReLU
	opConvGradInput  // dx from dy and w
	opConvGradFilter // dw from x and dy
	// Element-wise and reduction ops (issue 22).
	opMaxElem            // max(a, b), broadcasting
	opMinElem            // min(a, b), broadcasting
	opGreater            // a > b as 0 or 1, broadcasting
	opGreaterEqual       // a >= b
	opLess               // a < b
	opLessEqual          // a <= b
	opEqual              // a == b
	opWhere              // cond ≠ 0 ? a : b, broadcasting among the three
	opSumTo              // factor·Σ of x over the axes its output shape broadcasts along
	opBroadcastTo        // factor·x stretched to the output shape
	opMaxAxis            // max along axis, kept as size 1
	opMinAxis            // min along axis, kept as size 1
	opExtremeAxisGrad    // dx: dy at the first x equal to max or min along axis
	opSoftmaxAxis        // softmax along axis
	opLogSoftmaxAxis     // log softmax along axis
	opSoftmaxAxisGrad    // dx from softmax_axis output y and dy
	opLogSoftmaxAxisGrad // dx from log_softmax_axis output y and dy
	// Shape, product, normalization and attention ops (issue 22).
	opBatchMatMul       // products over broadcast batch axes, one gemm per block
	opTranspose         // axes permuted (perm)
	opSlice             // [from, from+d) along axis
	opSliceGrad         // Slice's gradient: dy placed at from along axis, zeros elsewhere
	opConcat            // inputs joined along axis
	opCausalMask        // the upper triangle (key after query) set to value
	opNormStats         // per row of the last axis: mean (0 for RMS) and 1/σ
	opNorm              // (x-mean)·(1/σ)·γ + β per row, from x and its stats
	opNormGrad          // dx of a norm from x, its stats, dy and γ
	opNormGammaGrad     // dγ = Σ_rows dy·(x-mean)·(1/σ)
	opCausalSoftmax     // Softmax(CausalMask(x)), the masked keys not computed
	opCausalSoftmaxGrad // dx from causal_softmax output y and dy
	// Self-attention on packed projections (selfattention.go).
	opSelfAttnWeights    // per head: softmax(q·kᵀ/√d), read in place from qkv
	opSelfAttn           // per head: weights·v, written in place among the heads
	opSelfAttnScoresGrad // per head: softmax_grad(weights, dy·vᵀ)
	opSelfAttnGrad       // qkv's gradient from qkv, the weights, the scores' gradient and dy
	// Batch norm in two passes each way (batchnorm.go), CPU only.
	opBatchNormSums     // [2, c]: Σ w·x and Σ w·x² per channel
	opBatchNorm         // act(x̂·γ + β + residual)
	opBatchNormGradSums // [2, c]: Σ dz and Σ dz·x̂ per channel
	opBatchNormGrad     // dx from x, the statistics, γ, the mask, the all-reduced gradient sums and dy
	numOps
)
