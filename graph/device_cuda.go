//go:build cuda

package graph

import (
	"fmt"
	"math"
	"strings"

	"github.com/gotrain/gotrain/gpu"
)

// devProgram is a Program's device half: its buffers in one arena on dev
// and the stream its steps enqueue on. It is used by one goroutine at a
// time, as its Program is.
type devProgram struct {
	p     *Program
	dev   *gpu.Device // immutable
	s     *gpu.Stream // immutable
	blas  *gpu.Handle // made by the first gemm op at compile time; nil if none
	arena gpu.Ptr     // every buffer, parameter slot, argmax and flag; immutable
	bufs  []gpu.Ptr   // per node id: its buffer (a mirror for a variable), 0 if not held
	aux   []gpu.Ptr   // per node id: its int64 index state (max-pool argmax), 0 if none
	vars  []*Node     // variable reads, whose mirrors Run refreshes

	flags    gpu.Ptr // one int32 per step, reset to math.MaxInt32 by Run
	flagHost []int32
	checks   []devCheck // in step order

	stage32 []float32 // Feed's conversion to float32, as long as the longest placeholder
	one32   [1]float32
	one64   [1]float64
}

// devCheck is a step that validates labels or ids on the device: its
// kernel lowers flag to the first bad row, which Run turns into the
// *LabelError or *IndexError the CPU kernel panics with.
type devCheck struct {
	step  int   // index in p.steps
	ids   *Node // the labels or ids checked
	bound int   // classes or table rows
	label bool  // a LabelError, else an IndexError
}

const (
	arenaAlign = 256 // bytes; cudaMalloc's alignment
	slotWords  = 32  // a step's parameter slot: 32 doubles or int64s, or cudaKernel.words
)

func roundUp(n int) int { return (n + arenaAlign - 1) / arenaAlign * arenaAlign }

// compileOn lays out p's buffers in one arena on dev, and plans each step
// through its op's CUDA kernel in ops.
func compileOn(p *Program, dev *gpu.Device) (err error) {
	if dev == nil {
		return progErr("compile on device", "want a device, got nil", ErrGraph)
	}
	where := "compile on " + dev.String()
	g, esz := p.g, p.dt.size()
	d := &devProgram{p: p, dev: dev, bufs: make([]gpu.Ptr, p.nodes), aux: make([]gpu.Ptr, p.nodes)}

	// Layout: buffers, then one parameter slot and one flag per step.
	offs, auxOffs := make([]int, p.nodes), make([]int, p.nodes)
	size, nbuf, nsteps, longest := 0, 0, 0, 0
	slotOffs := []int{0} // step i's slot is words [slotOffs[i], slotOffs[i+1])
	var largest *Node
	for id := 0; id < p.nodes; id++ {
		n := g.nodes[id]
		if !p.have[id] || !n.allocates() {
			continue
		}
		if ops[n.op].buf == bufFed {
			longest = max(longest, n.size)
		}
		offs[id] = size
		size += roundUp(n.size * esz)
		nbuf++
		if largest == nil || n.size > largest.size {
			largest = n
		}
		if !n.ownsBuffer() {
			continue
		}
		nsteps++
		w := slotWords
		if k := ops[n.op].cuda; k != nil && k.words != nil {
			w = max(w, k.words(n))
		}
		slotOffs = append(slotOffs, slotOffs[len(slotOffs)-1]+w)
		if k := ops[n.op].cuda; k != nil && k.aux {
			auxOffs[id] = size
			size += roundUp(n.size * 8)
		}
	}
	slots := size
	size += roundUp(slotOffs[nsteps] * 8)
	flagsOff := size
	size += roundUp(nsteps * 4)

	d.arena, err = dev.Alloc(size)
	if err != nil {
		msg := fmt.Sprintf("arena of %d bytes for %d buffers", size, nbuf)
		if largest != nil {
			msg += fmt.Sprintf(" (largest %s of shape %v)", largest.Name(), largest.shape)
		}
		return &Error{Op: where, Msg: msg + ": " + err.Error(), Err: err}
	}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	if d.s, err = dev.NewStream(); err != nil {
		return &Error{Op: where, Msg: "stream: " + err.Error(), Err: err}
	}
	d.flags = d.arena.Add(flagsOff)
	d.flagHost = make([]int32, nsteps)
	d.stage32 = make([]float32, longest)

	words := make([]float64, slotOffs[nsteps])
	for id := 0; id < p.nodes; id++ {
		n := g.nodes[id]
		if !p.have[id] {
			continue
		}
		switch ops[n.op].buf {
		case bufVar:
			if d.bufs[id], err = n.v.Mirror(dev); err != nil {
				return &Error{Op: where, Msg: fmt.Sprintf("node %s: %s", n.Name(), strings.TrimPrefix(err.Error(), "graph: ")), Err: err}
			}
			d.vars = append(d.vars, n)
			continue
		case bufAlias:
			d.bufs[id] = d.bufs[n.in[0].id]
			continue
		}
		d.bufs[id] = d.arena.Add(offs[id])
		if auxOffs[id] != 0 {
			d.aux[id] = d.arena.Add(auxOffs[id])
		}
		switch ops[n.op].buf {
		case bufFed:
			err = d.s.Memset32(d.bufs[id], 0, n.size*esz/4) // zeros until fed
		case bufConst:
			err = d.fillConst(n)
		default:
			continue
		}
		if err != nil {
			return &Error{Op: where, Msg: fmt.Sprintf("node %s: %v", n.Name(), err), Err: err}
		}
	}

	// Steps, in node order, as compile makes them.
	var steps []step
	for id := 0; id < p.nodes; id++ {
		n := g.nodes[id]
		if !p.have[id] || !n.ownsBuffer() {
			continue
		}
		i := len(steps)
		b := &devBuilder{d: d, n: n, step: i,
			words: words[slotOffs[i]:slotOffs[i+1]],
			slot:  d.arena.Add(slots + slotOffs[i]*8),
			flag:  d.flags.Add(4 * i)}
		k := ops[n.op].cuda
		if k == nil {
			return &Error{Op: where, Msg: fmt.Sprintf("node %s: no CUDA kernel for op %s", n.Name(), ops[n.op].name), Err: ErrGraph}
		}
		fn, err := k.plan(b, n)
		if err != nil {
			return &Error{Op: where, Msg: fmt.Sprintf("node %s: op %s: %v", n.Name(), ops[n.op].name, err), Err: err}
		}
		steps = append(steps, step{n: n, fn: func() {
			if err := fn(); err != nil {
				panic(err)
			}
		}})
	}
	if len(words) > 0 {
		if err := gpu.CopyHtoD(d.s, d.arena.Add(slots), words); err != nil {
			return &Error{Op: where, Msg: "parameters: " + err.Error(), Err: err}
		}
	}
	p.steps, p.dev = steps, d
	return nil
}

// fillConst writes a constant's value into its buffer, once.
func (d *devProgram) fillConst(n *Node) error {
	ptr := d.bufs[n.id]
	if d.p.dt == Float32 {
		return d.s.Memset32(ptr, math.Float32bits(float32(n.value)), n.size)
	}
	v := make([]float64, n.size)
	fill(v, n.value)
	return gpu.CopyHtoD(d.s, ptr, v)
}

func (d *devProgram) device() *gpu.Device    { return d.dev }
func (d *devProgram) stream() *gpu.Stream    { return d.s }
func (d *devProgram) buffer(n *Node) gpu.Ptr { return d.bufs[n.id] }

// run refreshes stale variable mirrors, enqueues the steps and, if any
// step checks labels or ids, waits for them and reports the first bad one.
func (d *devProgram) run() error {
	p := d.p
	for _, n := range d.vars {
		if _, err := n.v.Mirror(d.dev); err != nil {
			return err
		}
	}
	if len(d.checks) > 0 {
		if err := d.s.Memset32(d.flags, math.MaxInt32, len(d.flagHost)); err != nil {
			return &Error{Op: "run", Msg: "resetting the label flags: " + err.Error(), Err: err}
		}
	}
	for i := range p.steps {
		p.cur = i
		p.steps[i].fn()
	}
	if len(d.checks) == 0 {
		return nil
	}
	if err := gpu.CopyDtoH(d.s, d.flagHost, d.flags); err != nil {
		return &Error{Op: "run", Msg: "reading the label flags: " + err.Error(), Err: err}
	}
	for _, c := range d.checks {
		row := int(d.flagHost[c.step])
		if row == math.MaxInt32 {
			continue
		}
		p.cur = c.step
		v := d.read(c.ids, row)
		if c.label {
			panic(&LabelError{Row: row, Label: v, Class: c.bound})
		}
		panic(&IndexError{Pos: row, Value: v, Rows: c.bound})
	}
	return nil
}

// read returns element i of n's buffer, after the work enqueued before.
func (d *devProgram) read(n *Node, i int) float64 {
	ptr := d.bufs[n.id].Add(i * d.p.dt.size())
	var err error
	if d.p.dt == Float32 {
		if err = gpu.CopyDtoH(d.s, d.one32[:], ptr); err == nil {
			return float64(d.one32[0])
		}
	} else if err = gpu.CopyDtoH(d.s, d.one64[:], ptr); err == nil {
		return d.one64[0]
	}
	panic(&Error{Op: "read", Msg: fmt.Sprintf("%s: %v", n, err), Err: err})
}

func (d *devProgram) scalar(n *Node) float64 { return d.read(n, 0) }

func (d *devProgram) value(n *Node) []float64 {
	out := make([]float64, n.size)
	if n.size == 0 {
		return out
	}
	var err error
	if d.p.dt == Float64 {
		err = gpu.CopyDtoH(d.s, out, d.bufs[n.id])
	} else {
		b := make([]float32, n.size)
		err = gpu.CopyDtoH(d.s, b, d.bufs[n.id])
		for i, v := range b {
			out[i] = float64(v)
		}
	}
	if err != nil {
		panic(&Error{Op: "value", Msg: fmt.Sprintf("%s: %v", n, err), Err: err})
	}
	return out
}

func (d *devProgram) feed(n *Node, data []float64) {
	if n.size == 0 {
		return
	}
	var err error
	if d.p.dt == Float64 {
		err = gpu.CopyHtoD(d.s, d.bufs[n.id], data)
	} else {
		b := d.stage32[:n.size]
		for i, v := range data {
			b[i] = float32(v)
		}
		err = gpu.CopyHtoD(d.s, d.bufs[n.id], b)
	}
	if err != nil {
		panic(&Error{Op: "feed", Msg: fmt.Sprintf("%s: %v", n, err), Err: err})
	}
}

// close waits for the program's work and frees what compileOn made; it
// returns the first error.
func (d *devProgram) close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if d.s != nil {
		keep(d.s.Synchronize())
	}
	if d.blas != nil {
		keep(d.blas.Destroy())
		d.blas = nil
	}
	keep(d.dev.Free(d.arena))
	d.arena = 0
	if d.s != nil {
		keep(d.s.Destroy())
		d.s = nil
	}
	return first
}

// handle returns the program's cuBLAS handle, made at first use.
func (d *devProgram) handle() (*gpu.Handle, error) {
	if d.blas == nil {
		h, err := gpu.NewHandle(d.s)
		if err != nil {
			return nil, err
		}
		d.blas = h
	}
	return d.blas, nil
}

// loadModule returns src compiled for dt and loaded on dev, from the
// device's cache of compiled modules (gpu.Device.Module). name names the
// source in NVRTC's errors.
func loadModule(dev *gpu.Device, dt DType, name, src string) (*gpu.Module, error) {
	ctype := "float"
	if dt == Float64 {
		ctype = "double"
	}
	return dev.Module(name+"_"+dt.String()+".cu", "typedef "+ctype+" T;\n"+cudaHeader+src)
}
