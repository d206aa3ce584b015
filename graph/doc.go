// Package graph is gotrain's compute engine: it records a model's step as a
// static dataflow graph once, differentiates it symbolically, and compiles it
// into a Program that replays forward and backward passes from compiled Go
// with no allocation per step.
//
// # Building
//
// A Graph is built by ordinary function calls, usually while tracing a user's
// step function: Placeholder for inputs, Var for Variables (weights and
// optimizer slots that outlive graphs), Const, and op functions such as
// MatMul, Dense, Add and SparseSoftmaxCrossEntropy. Each op checks its
// operands' shapes when it is built and panics with an *Error wrapping
// ErrShape that names the op and the scope set by SetScope:
//
//	graph: dense_1: matmul: want inner dimensions equal, got [64 10] x [12 16]
//
// Gradients appends the backward nodes for a scalar loss.
//
// # Broadcasting
//
// The element-wise ops of two or three operands (Add, Sub, Mul, Div,
// Maximum, Minimum, the comparisons Greater, GreaterEqual, Less, LessEqual
// and Equal, and Where) broadcast as NumPy does. Shapes are aligned from
// their last axes; a shape with fewer axes is taken to have leading axes of
// size 1; each pair of aligned dimensions must be equal or one of them 1,
// and the result has the larger. An operand is read as if copied along its
// size-1 and missing axes: [3,1,5] and [7,1] give [3,7,5], a scalar goes
// with any shape, and [2,3] and [4,3] panic with
//
//	graph: add: want shapes that broadcast, got [2 3] and [4 3]
//
// The gradient with respect to a broadcast operand sums the output's
// gradient over the axes the operand was stretched along and has the
// operand's shape. One loop walks every broadcast, the shapes' size-1 axes
// dropped and runs of axes that step alike merged into one (equal shapes
// are one run); Add, Sub, Mul and Div hand its runs, and a vector along the
// last axis, to vector loops. AddSameShape is Add without broadcasting, for
// a residual join, where operands of different shapes are a mistake.
// Reductions with keep-dims (SumAxes, MeanAxes, MaxAxis, MinAxis) leave
// size-1 axes so that their result broadcasts back against their input, as
// in x - MaxAxis(x, -1, true).
//
// # Layer ops
//
// Conv2D (NHWC, strides, Valid, Same or Causal padding; Conv2DDilated adds
// dilation) runs in float32 through oneDNN (one conv2d node and
// one node per gradient, each a primitive made at Compile, ReLU fused), and
// in float64, in builds without oneDNN (nodnnl, no cgo) and in cuda builds
// as im2col patches times the kernel in one gemm, with bias and activation
// fused as in Dense; that gradient is two gemms and a col2im.
// MaxPool2D keeps each window's argmax in its kernel for the backward pass;
// AvgPool2D averages the pixels of each window inside the image. Gather reads table rows by id (Embedding)
// and scatter-adds its gradient. DropoutMask draws a counter-based random mask
// that depends only on (seed, stream, counter), the counter being read from a
// node at each Run (AdvanceCounter moves it between Runs). MaskedSum is the
// first moment of a batch whose rows are weighted by a mask.
//
// Batch norm over the real rows takes two passes each way:
// BatchNormSums, each channel's sum and sum of squares in one pass (which a
// caller may AllReduce for statistics over replicas), then BatchNorm, which
// normalizes, scales, shifts, adds a residual and applies a ReLU in one
// pass; backward, one pass sums dz and dz·x̂ per channel (all-reduced
// through the forward sums' collective), one writes dx. Those fused ops
// are host-only: cuda builds compose the same functions of element-wise
// ops, whose gradients flow through the sums by the chain rule.
//
// AllReduce joins the Programs of several replicas in the middle of their Runs
// through a Collective the caller provides: each participant's Run blocks at
// the node until all have arrived. It is differentiable: its backward node is
// another AllReduce of the output's gradient, since the gradient of a
// cross-participant sum is the cross-participant sum of the gradients.
// Program.Collectives lists the reductions a Program runs, in order, so a
// caller can check that participants line up.
//
// # Shape, product, normalization and attention ops
//
// For transformers: Transpose, Slice, Concat, Split and Stack
// move elements (a transpose that keeps the order of the axes longer than 1
// is a Reshape); MatMulT multiplies transposed matrices in place;
// BatchMatMul multiplies [..., m, k] by [..., k, n] block by block, its
// batch axes broadcasting as NumPy's do, and its gradient sums over the
// axes an operand was repeated along. LayerNorm and RMSNorm normalise over
// the last axis in one kernel per row; a statistics node keeps each row's
// mean and 1/σ for the backward pass, whose dx is one kernel per row and
// dγ one pass over the rows. Attention is composed: q·kᵀ/√d by
// BatchMatMul, Softmax and the product with v; causal, the softmax is one
// op, Softmax(CausalMask(x)) computing only the keys each query sees.
// SelfAttention is the multi-head form on packed projections [..., t,
// 3·heads·d]: its products read and write each head in place through
// BLAS's leading dimensions, so a layer needs no transposes around it; its
// weights node stops gradients, the attention node's gradient covering both.
//
// # Running
//
// Compile fixes the topological order and allocates every buffer. Run then
// computes the outputs; it allocates nothing and returns an error (never
// panics) when a step fails at run time, for example on a label out of range.
// Matrix products go to BLAS (internal/blas); Dense fuses bias and activation
// into one pass after the product and its backward computes the activation
// derivative once, then dW = xᵀ·dY, db = Σ dY and dX = dY·wᵀ with transposed
// gemm calls.
//
// # Devices
//
// Under -tags cuda, Graph.CompileOn compiles the same graph for an NVIDIA
// device (package gpu): every buffer lives on the device in one
// allocation, Run enqueues each step on the program's stream (matrix
// products through cuBLAS, the other ops as CUDA C kernels that NVRTC
// compiles at first use, one module per device and dtype), Feed copies to the
// device, and Value and Scalar wait and copy back. Every op's CUDA kernel
// sits beside its CPU kernel in one op table, and computes what the CPU
// kernel computes in the same order and precision: results agree bit for
// bit except where BLAS or the math library's transcendental functions
// round differently. A bad label or id sets a flag on the device, and Run
// returns the same error as the CPU. Variables are read from per-device
// mirrors (Variable.Mirror, SyncFrom, SetDeviceNewer, Invalidate); after
// SetDeviceNewer a device copy is the value and the host copy is made at
// the first host read, between Runs. Without the tag CompileOn returns an
// error wrapping gpu.ErrNotBuilt.
//
// # Invariants
//
// Variables are read directly from their storage during Run: no copy. The
// optimizer writes them only between Runs, so Programs of several replicas can
// run concurrently on one shared copy. A Program, and a Graph while it is
// built, must be used by one goroutine at a time. Reshape and StopGradient
// share their input's buffer; no op writes its inputs.
//
// A Program with AllReduce nodes must run concurrently with its peers' (one
// goroutine each); run alone it waits for them, unless its Collective
// abandons the reduction by panicking, which Run returns as an error.
//
// Both Float32 and Float64 graphs are supported by the same generic code;
// reductions and transcendental functions accumulate in float64.
package graph

// BUG(graph): Every node a Program computes keeps a buffer of its own for the
// Program's life; buffers of nodes whose lifetimes do not overlap are not
// yet shared, so memory is the sum of all intermediate values.

// BUG(graph): Compile refuses a Program whose own buffers exceed the
// machine's memory (ErrMemory), but does not count memory already in use,
// so several Programs (one per replica) that fit one by one may still not
// fit together.

// BUG(graph): Gradients of gradients (second derivatives) are not supported;
// Gradients panics with ErrGraph when it meets a backward-only node.

// BUG(graph): On a device, Sum and Mean add on one thread (in the CPU's
// order, so with its bits), SumAxes and MeanAxes on one thread per output
// element, and scatter_add runs one thread per column; all are slow on
// long reductions. AllReduce inside a device program goes through the host;
// the strategy sums gradients across GPUs with NCCL instead.

// BUG(graph): On a device, a broadcast whose shapes leave more than 10
// axes (7 for Where) once size-1 axes are dropped and alike axes merged
// does not fit a step's parameter slot: CompileOn returns an error
// wrapping ErrShape.

// BUG(graph): A Variable's device mirrors are never freed; they live as
// long as the Variable.

// BUG(graph): Slice and Split copy even where a view would do (a slice
// along the first axis); the engine's buffers have no offset aliases yet. On the CPU BatchMatMul calls one
// gemm per block in turn; on a device the norms run one thread per row
// (per column for dγ), which suits the short rows of a small transformer
// only.
