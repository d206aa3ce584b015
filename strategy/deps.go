package strategy

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/gotrain/gotrain/internal/stepdeps"
)

// stepVars is what a trace watches: the session variables its step
// function reads, as the cell compiler registered them (internal/stepdeps),
// and their bytes just after the trace. A trace is built from the values
// the step found there (an optimizer's updates, a model's layers, a float
// folded into the graph as a constant), so once one is reassigned the
// trace is stale and Run traces again.
type stepVars struct {
	fn   string // the step function's name in the cell; "" when unknown
	vars []stepdeps.Dep
	snap []byte // the vars' bytes, one after the other
}

// watch looks up what the step function whose code is at pc reads and
// snapshots it. It runs at trace time only.
func (w *stepVars) watch(pc uintptr) {
	w.fn, w.vars = stepdeps.Watch(pc)
	n := 0
	for _, d := range w.vars {
		n += int(d.Size)
	}
	w.snap = make([]byte, 0, n)
	for _, d := range w.vars {
		w.snap = append(w.snap, unsafe.Slice((*byte)(d.Addr), d.Size)...)
	}
}

// changed returns the first variable reassigned, or function or method
// redefined, since watch, or nil. It runs at every Run (trace.stale), so it
// only compares bytes.
func (w *stepVars) changed() *stepdeps.Dep {
	off := uintptr(0)
	for i := range w.vars {
		d := &w.vars[i]
		if !bytes.Equal(unsafe.Slice((*byte)(d.Addr), d.Size), w.snap[off:off+d.Size]) {
			return d
		}
		off += d.Size
	}
	return nil
}

// varRetraceAdvice is how many retraces one variable's changes cause before
// Run stops naming each and says once that the variable should be an input.
const varRetraceAdvice = 5

// warnVarRetrace says that the step traced again because a variable it reads
// was reassigned: one line per retrace, up to varRetraceAdvice for one
// variable, then one line of advice and silence, as a variable reassigned
// at every step (a step counter read by the step) would flood the cell.
// A redefined function or method is said each time: it changes only when
// a cell redefines it.
func (s *Mirrored) warnVarRetrace(fn string, d *stepdeps.Dep) {
	if fn == "" {
		fn = "the step function"
	}
	v := d.Name
	if d.Code {
		fmt.Fprintf(s.warn, "strategy: retracing %s: %s was redefined since it was traced\n", fn, v)
		return
	}
	c := &s.traces
	if c.varRetraces == nil {
		c.varRetraces = map[string]int{}
	}
	c.varRetraces[v]++
	switch n := c.varRetraces[v]; {
	case n < varRetraceAdvice:
		fmt.Fprintf(s.warn, "strategy: retracing %s: %s changed since it was traced\n", fn, v)
	case n == varRetraceAdvice:
		fmt.Fprintf(s.warn, "strategy: warning: retracing %s: %s changed since it was traced, %d times now; "+
			"each change traces the step again: pass a value that changes as an input of the step\n", fn, v, n)
	}
}
