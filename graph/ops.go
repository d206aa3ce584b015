package graph

import (
	"fmt"
	"slices"
)

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

// Activation selects the nonlinearity of Dense and Activate.
type Activation int

// The activations. GELU is the exact form x·Φ(x) (PyTorch's default, Keras
// approximate=False); GELUTanh is its tanh approximation
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (GPT-2's, PyTorch's
// approximate="tanh"); SiLU is x·sigmoid(x) (swish).
const (
	Linear Activation = iota
	ReLU
	Tanh
	Sigmoid
	GELU
	GELUTanh
	SiLU
	numActivations
)

var actNames = [numActivations]string{"linear", "relu", "tanh", "sigmoid", "gelu", "gelu_tanh", "silu"}

// String returns the activation's lowercase name, e.g. "relu".
func (a Activation) String() string {
	if a >= 0 && a < numActivations {
		return actNames[a]
	}
	return fmt.Sprintf("Activation(%d)", int(a))
}

// bcast is how the operands of a binary elementwise op line up.
type bcast int

const (
	bSame    bcast = iota // equal shapes
	bScalarA              // a has one element
	bScalarB              // b has one element
	bVecA                 // a is a vector over the trailing axis of b
	bVecB                 // b is a vector over the trailing axis of a
	bGeneral              // any other shapes that broadcast (broadcast.go)
)

func shapeErr(g *Graph, op, msg string) *Error { return g.err(op, msg, ErrShape) }

// graphOf returns the graph of the first node, checking every node is from it.
func graphOf(op string, ns ...*Node) *Graph {
	for _, n := range ns {
		if n == nil {
			panic(&Error{Op: op, Msg: "want a node, got nil", Err: ErrGraph})
		}
	}
	g := ns[0].g
	g.own(op, ns...)
	return g
}

func unary(op opKind, x *Node) *Node {
	g := graphOf(ops[op].name, x)
	return g.add(op, x.shape, x)
}

// MatMul returns the matrix product a·b of a [m,k] and b [k,n], shape [m,n].
// It panics with an error wrapping ErrShape if a or b is not a matrix or the
// inner dimensions differ.
func MatMul(a, b *Node) *Node { return matMul(a, b, false, false) }

func matMul(a, b *Node, ta, tb bool) *Node {
	g := graphOf("matmul", a, b)
	if len(a.shape) != 2 || len(b.shape) != 2 {
		panic(shapeErr(g, "matmul", fmt.Sprintf("want two matrices, got %v x %v", a.shape, b.shape)))
	}
	m, k := a.shape[0], a.shape[1]
	if ta {
		m, k = k, m
	}
	k2, n := b.shape[0], b.shape[1]
	if tb {
		k2, n = n, k2
	}
	if k != k2 {
		panic(shapeErr(g, "matmul", fmt.Sprintf("want inner dimensions equal, got %v x %v", a.shape, b.shape)))
	}
	out := g.add(opMatMul, []int{m, n}, a, b)
	out.transA, out.transB = ta, tb
	return out
}

// Dense returns act(x·w + b) for x [m,k], w [k,n] and b [n] (b may be nil),
// computed as one matrix product followed by one pass over the output.
// It panics with an error wrapping ErrShape if the shapes do not fit.
func Dense(x, w, b *Node, act Activation) *Node {
	ns := []*Node{x, w}
	if b != nil {
		ns = append(ns, b)
	}
	g := graphOf("dense", ns...)
	checkAct(g, "dense", act)
	if len(x.shape) != 2 || len(w.shape) != 2 {
		panic(shapeErr(g, "dense", fmt.Sprintf("want input and kernel matrices, got %v and %v", x.shape, w.shape)))
	}
	if x.shape[1] != w.shape[0] {
		panic(shapeErr(g, "dense", fmt.Sprintf("want input width %d, got %d", w.shape[0], x.shape[1])))
	}
	if b != nil && (len(b.shape) != 1 || b.shape[0] != w.shape[1]) {
		panic(shapeErr(g, "dense", fmt.Sprintf("want bias shape [%d], got %v", w.shape[1], b.shape)))
	}
	if act.needsInput() {
		// The derivative needs the pre-activation; keep it as its own node.
		return Activate(Dense(x, w, b, Linear), act)
	}
	out := g.add(opDense, []int{x.shape[0], w.shape[1]}, ns...)
	out.act = act
	return out
}

func checkAct(g *Graph, op string, act Activation) {
	if act < 0 || act >= numActivations {
		panic(g.err(op, fmt.Sprintf("want an activation Linear..SiLU, got %v", act), ErrShape))
	}
}

// Activate applies act elementwise.
// It panics with an error wrapping ErrShape if act is unknown.
func Activate(x *Node, act Activation) *Node {
	g := graphOf("activate", x)
	checkAct(g, "activate", act)
	if act == Linear {
		return x
	}
	out := g.add(opActivate, x.shape, x)
	out.act = act
	return out
}

func binary(op opKind, a, b *Node) *Node {
	name := ops[op].name
	g := graphOf(name, a, b)
	shape := broadcastShape(g, name, a.shape, b.shape)
	out := g.add(op, shape, a, b)
	out.mode = bcastMode(a.shape, b.shape, shape)
	return out
}

// Add returns a + b elementwise, broadcasting a and b to a common shape
// (the package doc's Broadcasting section). Equal shapes, a scalar and a
// vector over the last axis take loops of their own.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Add(a, b *Node) *Node { return binary(opAdd, a, b) }

// Sub returns a - b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Sub(a, b *Node) *Node { return binary(opSub, a, b) }

// Mul returns a * b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Mul(a, b *Node) *Node { return binary(opMul, a, b) }

// Div returns a / b elementwise, broadcasting as Add does.
// It panics with an error wrapping ErrShape if the shapes do not broadcast.
func Div(a, b *Node) *Node { return binary(opDiv, a, b) }

// Scale returns c·x.
func Scale(x *Node, c float64) *Node {
	out := unary(opScale, x)
	out.factor = c
	return out
}

// Neg returns -x.
func Neg(x *Node) *Node { return unary(opNeg, x) }

// Exp returns eˣ elementwise.
func Exp(x *Node) *Node { return unary(opExp, x) }

// Log returns the natural logarithm elementwise.
func Log(x *Node) *Node { return unary(opLog, x) }

// Square returns x² elementwise.
func Square(x *Node) *Node { return unary(opSquare, x) }

// Sqrt returns √x elementwise.
func Sqrt(x *Node) *Node { return unary(opSqrt, x) }

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

// SparseSoftmaxCrossEntropy returns, for logits [m,c] and labels [m] holding
// class ids as values, the per-example loss [m]:
// log Σⱼ exp(logits[i,j]) - logits[i,labels[i]]. Forward and backward are
// fused and stable. Labels get no gradient. A label outside [0,c) makes Run
// return an error.
// It panics with an error wrapping ErrShape if the shapes do not fit.
func SparseSoftmaxCrossEntropy(labels, logits *Node) *Node {
	const op = "sparse_softmax_cross_entropy"
	g := graphOf(op, labels, logits)
	if len(logits.shape) != 2 || len(labels.shape) != 1 || labels.shape[0] != logits.shape[0] {
		panic(shapeErr(g, op, fmt.Sprintf("want labels [m] and logits [m,c], got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSparseXent, labels.shape, labels, logits)
}

// SoftmaxCrossEntropy returns, for logits [m,c] and labels [m,c] holding
// probabilities, the per-example loss [m]: -Σⱼ labels[i,j]·logsoftmax(logits)[i,j].
// It panics with an error wrapping ErrShape if the shapes do not fit.
func SoftmaxCrossEntropy(labels, logits *Node) *Node {
	const op = "softmax_cross_entropy"
	g := graphOf(op, labels, logits)
	if len(logits.shape) != 2 || !slices.Equal(labels.shape, logits.shape) {
		panic(shapeErr(g, op, fmt.Sprintf("want labels and logits [m,c], got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSoftmaxXent, logits.shape[:1], labels, logits)
}

// SigmoidCrossEntropy returns elementwise max(x,0) - x·z + log(1+exp(-|x|))
// for logits x and labels z of equal shape: the binary cross-entropy of
// sigmoid(x) against z, computed stably.
// It panics with an error wrapping ErrShape if the shapes differ.
func SigmoidCrossEntropy(labels, logits *Node) *Node {
	const op = "sigmoid_cross_entropy"
	g := graphOf(op, labels, logits)
	if !slices.Equal(labels.shape, logits.shape) {
		panic(shapeErr(g, op, fmt.Sprintf("want labels and logits of equal shape, got %v and %v", labels.shape, logits.shape)))
	}
	return g.add(opSigmoidXent, logits.shape, labels, logits)
}

// Sum returns the sum of all elements, a scalar (shape []).
func Sum(x *Node) *Node {
	g := graphOf("sum", x)
	return g.add(opSum, nil, x)
}

// Mean returns the mean of all elements, a scalar (shape []).
func Mean(x *Node) *Node {
	g := graphOf("mean", x)
	return g.add(opMean, nil, x)
}

func normAxis(op string, x *Node, axis int) (*Graph, int) {
	g := graphOf(op, x)
	r, ax := len(x.shape), axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r {
		panic(shapeErr(g, op, fmt.Sprintf("want axis in [-%d,%d), got %d for shape %v", r, r, axis, x.shape)))
	}
	return g, ax
}

// SumAxis returns the sum over one axis, which is removed from the shape.
// A negative axis counts from the end.
// It panics with an error wrapping ErrShape if the axis is out of range.
func SumAxis(x *Node, axis int) *Node {
	g, axis := normAxis("sum_axis", x, axis)
	out := g.add(opSumAxis, slices.Delete(slices.Clone(x.shape), axis, axis+1), x)
	out.axis = axis
	out.factor = 1
	return out
}

// MeanAxis returns the mean over one axis, which is removed from the shape.
// A negative axis counts from the end.
// It panics with an error wrapping ErrShape if the axis is out of range.
func MeanAxis(x *Node, axis int) *Node {
	g, axis := normAxis("mean_axis", x, axis)
	out := g.add(opSumAxis, slices.Delete(slices.Clone(x.shape), axis, axis+1), x)
	out.axis = axis
	out.factor = 1
	if d := x.shape[axis]; d > 0 {
		out.factor = 1 / float64(d)
	}
	return out
}

// Reshape returns x with a new shape of the same number of elements. One
// dimension may be -1, inferred from the others. The result shares x's
// buffer.
// It panics with an error wrapping ErrShape if the sizes differ.
func Reshape(x *Node, shape ...int) *Node {
	g := graphOf("reshape", x)
	shape = slices.Clone(shape)
	infer, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			panic(shapeErr(g, "reshape", fmt.Sprintf("want non-negative dimensions and at most one -1, got %v", shape)))
		default:
			known *= d
		}
	}
	if infer >= 0 && known > 0 && x.size%known == 0 {
		shape[infer] = x.size / known
		known = x.size
	}
	if known != x.size || (infer >= 0 && shape[infer] < 0) {
		panic(shapeErr(g, "reshape", fmt.Sprintf("want %d elements, got shape %v for %v", x.size, shape, x.shape)))
	}
	if slices.Equal(shape, x.shape) {
		return x
	}
	return g.add(opReshape, shape, x)
}

// StopGradient returns x unchanged in the forward pass and blocks gradients
// from flowing back through it. The result shares x's buffer.
func StopGradient(x *Node) *Node {
	g := graphOf("stop_gradient", x)
	return g.add(opStopGradient, x.shape, x)
}
