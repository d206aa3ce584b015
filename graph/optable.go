package graph

// opDef is everything the engine knows about one op kind: its name, where
// its buffer comes from, its CPU kernel, its CUDA kernel, its gradient and
// the facts other passes ask of it. Each op has one entry in ops, instead
// of one switch per concern, and TestOpTable fails when an entry is left
// incomplete, so that no op exists on one device only by accident.
//
// An op lives in the file of its family (arith.go, reduce.go, conv.go, ...):
// its kind, its entry, its builder, CPU kernel and gradient. The family's
// _cuda.go twin holds its CUDA plan, its entry's cuda field and its CUDA C.
// Adding an op touches those two files.
type opDef struct {
	// name is the op's name in node names and errors ("matmul").
	name string
	// buf says where the node's buffer comes from; bufStep unless set.
	buf bufKind
	// cpu builds the node's step on the CPU; set exactly for bufStep ops.
	cpu cpuKernel
	// cuda is the node's kernel on an NVIDIA device (CompileOn). Under
	// -tags cuda the family's _cuda.go twin fills it (defineCUDA), and
	// TestOpTable requires it for every op with a cpu kernel; without the
	// tag it stays nil.
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

// opKind names an op: its index in ops.
type opKind int

// ops holds every op's entry, indexed by opKind. Each family file reserves
// its ops' kinds with newOp, as package variables, and fills their entries
// with defineOps in its init; its _cuda.go twin adds the CUDA kernels with
// defineCUDA. The entries are filled by init rather than by the variables'
// declarations because gradients build nodes whose names and errors read
// ops, which Go's initialization order would reject as a cycle.
var ops []opDef

// newOp reserves an entry in ops and returns its kind. It runs while the
// package's variables are initialized, before any init fills an entry.
func newOp() opKind {
	ops = append(ops, opDef{})
	return opKind(len(ops) - 1)
}

// defineOps fills the entries of defs, keeping a CUDA kernel a twin's init
// may have attached first.
// It panics if an entry is filled twice.
func defineOps(defs map[opKind]opDef) {
	for op, d := range defs {
		if ops[op].name != "" {
			panic("graph: op " + d.name + " defined twice")
		}
		d.cuda = ops[op].cuda
		ops[op] = d
	}
}
