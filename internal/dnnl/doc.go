// Package dnnl runs float32 2-D convolutions through oneDNN (Debian's
// libdnnl2, the library PyTorch's CPU convolutions use): forward,
// backward-data and backward-weights primitives on NHWC activations, with
// the weights in the format oneDNN picks for the CPU and reordered from and
// to the caller's HWIO layout inside each call.
//
// # Use
//
// New builds a primitive for one Geometry, once (graph does it when a
// Program is compiled); Forward, BackwardData or BackwardWeights run it at
// each step on the caller's buffers. Impl names the implementation oneDNN
// picked: one whose name starts with "gemm" is its im2col fallback, about 3x
// slower, which graph's tests refuse for the ResNet's layers.
//
// # Invariants
//
// Activations are NHWC and weights HWIO on the Go side; oneDNN's own
// weights format never leaves a Conv. The padding after the image is
// derived from the output size (Geometry.padEnd), so a Geometry is exactly
// graph's window.
//
// # Concurrency
//
// A Conv is used by one goroutine at a time: it owns its weights buffer and
// its scratchpad (oneDNN's user scratchpad mode, so no state lives in an OS
// thread, which a goroutine may change between calls). Several Convs run
// at once on different goroutines. A Conv runs on the thread count New was
// given (a jit kernel partitions its work for that count when it is made):
// each call sets the calling OS thread's OpenMP count to it, so each
// replica keeps its own share of the cores.
//
// # Builds
//
// The binding is cgo against -ldnnl; the nodnnl tag or CGO_ENABLED=0
// leaves it out (Available is false and New returns ErrUnavailable), and
// graph then convolves through im2col and BLAS, as it always does in
// float64.
//
// BUG(dnnl): it binds oneDNN 2.x's C API (operation descriptors), which
// oneDNN 3 removed; Debian bookworm ships 2.6.3.
package dnnl
