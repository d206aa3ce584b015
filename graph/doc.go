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
// # Invariants
//
// Variables are read directly from their storage during Run: no copy. The
// optimizer writes them only between Runs, so Programs of several replicas can
// run concurrently on one shared copy. A Program, and a Graph while it is
// built, must be used by one goroutine at a time. Reshape and StopGradient
// share their input's buffer; no op writes its inputs.
//
// Both Float32 and Float64 graphs are supported by the same generic code;
// reductions and transcendental functions accumulate in float64.
package graph

// BUG(graph): Every node a Program computes keeps a buffer of its own for the
// Program's life; buffers of nodes whose lifetimes do not overlap are not
// yet shared, so memory is the sum of all intermediate values.

// BUG(graph): Gradients of gradients (second derivatives) are not supported;
// Gradients panics with ErrGraph when it meets a backward-only node.
