package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/internal/memlimit"
)

// Program is a compiled graph: a fixed sequence of steps computing its
// outputs, and every buffer they use, allocated once by Compile.
//
// Run allocates nothing. A Program is not safe for concurrent use; Programs
// compiled from different graphs (or the same one) may run concurrently, and
// share Variables for reading.
type Program struct {
	g     *Graph
	dt    DType
	nodes int // graph nodes at compile time; later nodes are not in the program
	have  []bool
	f32   [][]float32 // per node id: its buffer, nil if not in the program
	f64   [][]float64
	steps []step
	cur   int         // index of the step running, for errors
	vars  []*Variable // the variables a CPU program reads in place

	// dev runs the program on a device (CompileOn); nil on the CPU, where
	// f32 or f64 hold the buffers. Immutable.
	dev deviceBackend
}

type step struct {
	n  *Node
	fn func()
}

// Compile fixes the order of the nodes needed by outputs and allocates their
// buffers. Every placeholder of the graph gets a buffer, needed or not, so
// Feed never fails on a valid placeholder. Variables are read from their own
// storage, not copied.
//
// Compile returns an error if there are no outputs, or an output is nil or
// belongs to another graph, and an error wrapping ErrMemory, naming the
// largest buffer's node and shape, if the buffers would not fit in the
// machine's memory (the smaller of its RAM and its cgroup's limit).
func (g *Graph) Compile(outputs ...*Node) (*Program, error) {
	p, err := g.newProgram("compile", outputs)
	if err != nil {
		return nil, err
	}
	if err := p.checkMemory(); err != nil {
		return nil, err
	}
	if g.dt == Float32 {
		p.f32 = make([][]float32, p.nodes)
		p.steps = compile(p, p.f32)
	} else {
		p.f64 = make([][]float64, p.nodes)
		p.steps = compile(p, p.f64)
	}
	return p, nil
}

// newProgram checks outputs and marks the nodes a program computing them
// holds, for Compile and CompileOn; op names the caller in errors.
func (g *Graph) newProgram(op string, outputs []*Node) (*Program, error) {
	if len(outputs) == 0 {
		return nil, progErr(op, "want at least one output, got none", ErrGraph)
	}
	for i, o := range outputs {
		if o == nil {
			return nil, progErr(op, fmt.Sprintf("want a node as output %d, got nil", i), ErrGraph)
		}
		if o.g != g {
			return nil, progErr(op, fmt.Sprintf("output %s belongs to another graph", o), ErrGraph)
		}
	}
	p := &Program{g: g, dt: g.dt, nodes: len(g.nodes)}
	p.have = make([]bool, p.nodes)
	for _, o := range outputs {
		p.have[o.id] = true
	}
	for id := p.nodes - 1; id >= 0; id-- {
		if p.have[id] {
			for _, in := range g.nodes[id].in {
				p.have[in.id] = true
			}
		}
	}
	for _, n := range g.nodes {
		if ops[n.op].buf == bufFed {
			p.have[n.id] = true
		}
	}
	return p, nil
}

// checkMemory returns an error wrapping ErrMemory if the buffers compile
// would allocate for p do not fit in the machine's memory: a batch of 1<<20
// rows through a wide layer would otherwise end the process with "fatal
// error: out of memory". Variables and aliases
// (reshapes, stop-gradients) allocate nothing.
func (p *Program) checkMemory() error {
	var need float64
	var largest *Node
	buffers := 0
	for id, have := range p.have {
		n := p.g.nodes[id]
		if !have || !n.allocates() {
			continue
		}
		buffers++
		need += memlimit.Size([]int{n.size}, p.dt.size())
		if largest == nil || n.size > largest.size {
			largest = n
		}
	}
	if memlimit.Fits(need) {
		return nil
	}
	return progErr("compile", fmt.Sprintf("%v: %s of shape %v and %d other buffers: %s",
		ErrMemory, largest.Name(), largest.shape, buffers-1, memlimit.Shortfall(need)), ErrMemory)
}

// Graph returns the graph the program was compiled from.
func (p *Program) Graph() *Graph { return p.g }

// DType returns the element type of the program's buffers.
func (p *Program) DType() DType { return p.dt }

// NumSteps returns how many nodes Run computes (inputs, variables and
// constants excluded).
func (p *Program) NumSteps() int { return len(p.steps) }

// progErr builds a Program misuse error; it has no scope, since the graph's
// scope when the Program is used says nothing about the node.
func progErr(op, msg string, kind error) *Error { return &Error{Op: op, Msg: msg, Err: kind} }

func (p *Program) check(op string, n *Node) {
	if n == nil {
		panic(progErr(op, "want a node, got nil", ErrGraph))
	}
	if n.g != p.g || n.id >= p.nodes || !p.have[n.id] {
		panic(progErr(op, fmt.Sprintf("node %s is not computed by this program", n), ErrGraph))
	}
}

// Feed copies data, converted to the program's dtype, into placeholder n.
// It panics with an error wrapping ErrShape if len(data) is not n's size, and
// ErrGraph if n is not a placeholder of the program's graph.
func (p *Program) Feed(n *Node, data []float64) {
	p.check("feed", n)
	if ops[n.op].buf != bufFed {
		panic(progErr("feed", fmt.Sprintf("want a placeholder, got %s", n), ErrGraph))
	}
	if len(data) != n.size {
		panic(progErr("feed", fmt.Sprintf("%s: want %d values, got %d", n, n.size, len(data)), ErrShape))
	}
	if p.dev != nil {
		p.dev.feed(n, data)
		return
	}
	if p.dt == Float64 {
		copy(p.f64[n.id], data)
		return
	}
	dst := p.f32[n.id]
	for i, v := range data {
		dst[i] = float32(v)
	}
}

// F32 returns the buffer of node n if the program computes in float32 on the
// CPU, else nil (a device program's buffers are on the device: see Buffer).
// For a variable it is the variable's storage; for a placeholder,
// writing it is a cheaper Feed. The buffer is valid for the program's life
// and is overwritten by each Run.
// It panics with an error wrapping ErrGraph if the program does not hold n.
func (p *Program) F32(n *Node) []float32 {
	p.check("f32", n)
	if p.dt != Float32 || p.dev != nil {
		return nil
	}
	return p.f32[n.id]
}

// F64 is F32 for float64 programs.
func (p *Program) F64(n *Node) []float64 {
	p.check("f64", n)
	if p.dt != Float64 || p.dev != nil {
		return nil
	}
	return p.f64[n.id]
}

// Value returns a copy of node n's buffer as float64. On a device program
// it waits for the program's work and copies from the device.
// It panics with an error wrapping ErrGraph if the program does not hold n,
// and with an *Error wrapping the gpu error if the copy fails.
func (p *Program) Value(n *Node) []float64 {
	p.check("value", n)
	if p.dev != nil {
		return p.dev.value(n)
	}
	if p.dt == Float64 {
		return append([]float64(nil), p.f64[n.id]...)
	}
	b := p.f32[n.id]
	out := make([]float64, len(b))
	for i, v := range b {
		out[i] = float64(v)
	}
	return out
}

// Scalar returns element 0 of node n's buffer as float64, typically a loss.
// On a device program it waits for the program's work, as Value does.
// It panics with an error wrapping ErrGraph if the program does not hold n,
// and ErrShape if n is empty.
func (p *Program) Scalar(n *Node) float64 {
	p.check("scalar", n)
	if n.size == 0 {
		panic(progErr("scalar", fmt.Sprintf("want a node with elements, got %s", n), ErrShape))
	}
	if p.dev != nil {
		return p.dev.scalar(n)
	}
	if p.dt == Float64 {
		return p.f64[n.id][0]
	}
	return float64(p.f32[n.id][0])
}

// Run computes every node the outputs need, in order. A panic in a step (for
// example a label out of range) is recovered into an *Error naming the node
// and its scope; the buffers then hold partial results.
//
// On a device program Run enqueues every step on the program's stream and
// returns before they finish, unless the program checks labels or ids: then
// it waits for the step and returns the same *LabelError or *IndexError,
// wrapped in the same *Error, as the CPU does. A failing launch or copy
// returns an *Error naming the node and wrapping the gpu error.
func (p *Program) Run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = p.runError(r)
		}
	}()
	if p.dev != nil {
		return p.dev.run()
	}
	if hostStaleVars.Load() != 0 {
		// A device copy of some variable is newer: copy the ones read.
		for _, v := range p.vars {
			v.hostRead()
		}
	}
	for i := range p.steps {
		p.cur = i
		p.steps[i].fn()
	}
	return nil
}

func (p *Program) runError(r any) error {
	n := p.steps[p.cur].n
	e := &Error{Scope: n.scope, Op: "node " + n.Name()}
	if err, ok := r.(error); ok {
		e.Err = err
		e.Msg = strings.TrimPrefix(err.Error(), "graph: ")
		var ge *Error
		if errors.As(err, &ge) {
			e.Msg = ge.Msg
		}
	} else {
		e.Msg = fmt.Sprint(r)
	}
	return e
}
