package graph

import "github.com/gotrain/gotrain/gpu"

// Device programs.
//
// CompileOn compiles the same node order as Compile, but every buffer lives
// on an NVIDIA device, in one allocation, and each step is a kernel launch
// (or a cuBLAS gemm) on the program's stream. Each op's CUDA kernel sits in
// its entry of ops beside its CPU kernel (its family's _cuda.go file fills
// it), so the two cannot drift apart by accident. Kernels are compiled by
// NVRTC at first use, as one module per device and dtype.

// deviceBackend is what a Program delegates to when its buffers are on a
// device. Program checks its arguments before calling; only the cuda build
// implements it.
type deviceBackend interface {
	run() error
	feed(n *Node, data []float64)
	value(n *Node) []float64
	scalar(n *Node) float64
	buffer(n *Node) gpu.Ptr
	device() *gpu.Device
	stream() *gpu.Stream
	close() error
}

// CompileOn is Compile for the device dev: it returns a Program whose
// buffers are on dev, allocated once, and whose Run enqueues every step on a
// stream of its own. Feed copies to the device; Value and Scalar wait for
// the program's work and copy back; F32 and F64 return nil (Buffer gives a
// node's device address); Deferrable is false. Variables are read from
// their mirrors on dev (Variable.Mirror), refreshed from the host at each
// Run when stale. The program's kernels are compiled by NVRTC at first use
// on dev, as one module per dtype; Close frees what the program allocated.
//
// CompileOn returns Compile's errors, an error naming the allocation when
// dev is out of memory (errors.Is(err, gpu.ErrOutOfMemory)), and an error
// naming the node and op when a kernel fails to compile. In a binary built
// without -tags cuda it returns an error wrapping gpu.ErrNotBuilt.
func (g *Graph) CompileOn(dev *gpu.Device, outputs ...*Node) (*Program, error) {
	p, err := g.newProgram("compile on device", outputs)
	if err != nil {
		return nil, err
	}
	if err := compileOn(p, dev); err != nil {
		return nil, err
	}
	return p, nil
}

// Device returns the device the program runs on, nil for a CPU program.
func (p *Program) Device() *gpu.Device {
	if p.dev == nil {
		return nil
	}
	return p.dev.device()
}

// Stream returns the stream a device program enqueues its work on, nil for
// a CPU program. Work a caller enqueues on it after Run (an all-reduce of
// gradients, an update) runs after the program's steps.
func (p *Program) Stream() *gpu.Stream {
	if p.dev == nil {
		return nil
	}
	return p.dev.stream()
}

// Buffer returns the device address of node n's buffer in a device program
// (a variable's mirror for a variable), and the zero Ptr in a CPU program.
// Like F32's slice it is valid for the program's life and rewritten by each
// Run.
// It panics with an error wrapping ErrGraph if the program does not hold n.
func (p *Program) Buffer(n *Node) gpu.Ptr {
	p.check("buffer", n)
	if p.dev == nil {
		return 0
	}
	return p.dev.buffer(n)
}

// Close frees a device program's memory, stream and cuBLAS handle, after
// its work finishes; the program must not be used afterwards. Variables'
// mirrors stay. Close of a CPU program does nothing.
func (p *Program) Close() error {
	if p.dev == nil {
		return nil
	}
	return p.dev.close()
}
