package strategy

import (
	"github.com/gotrain/gotrain/internal/stepdeps"

	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// traceKey identifies a trace: the step function and the inputs' shapes.
// The function's code pointer alone does not identify it: closures of one
// literal share code. So the key also holds the closure's address (the func
// value's data word); the cache entry keeps the function alive so the
// address cannot be reused by another function while the entry exists.
type traceKey struct {
	code    uintptr
	closure unsafe.Pointer
	typ     reflect.Type
	shapes  []int // per replica, per argument: rank, dims; then mask rows
}

func (k *traceKey) equal(o *traceKey) bool {
	return k.closure == o.closure && k.code == o.code && k.lookalike(o)
}

// lookalike reports whether o has k's type and shapes, whatever its code
// and closure: maybe the same step function under another closure. The code
// pointer does not decide it: a func literal in a function the compiler
// inlines has a code pointer per call site.
func (k *traceKey) lookalike(o *traceKey) bool {
	return k.typ == o.typ && slices.Equal(k.shapes, o.shapes)
}

// traceKeyOf writes the key into buf's storage, so a steady loop's lookup
// does not allocate; put clones it.
func traceKeyOf(stepFn any, fn reflect.Value, in *stepInputs, buf []int) traceKey {
	buf = buf[:0]
	for _, args := range in.args {
		for _, a := range args {
			buf = append(buf, len(a.Shape))
			buf = append(buf, a.Shape...)
		}
	}
	if in.batch != nil {
		buf = append(buf, -1, in.batch.rows)
	}
	return traceKey{
		code:    fn.Pointer(),
		closure: (*[2]unsafe.Pointer)(unsafe.Pointer(&stepFn))[1],
		typ:     fn.Type(),
		shapes:  buf,
	}
}

// traceCacheSize bounds the traces a strategy keeps; a notebook alternates
// between a few step functions (train, evaluate), and a trace holds every
// buffer of a step.
const traceCacheSize = 8

// traceCache is a small most-recently-used list. Guarded by Mirrored.runMu.
type traceCache struct {
	entries    []traceEntry
	lookalikes int   // consecutive traces of new closures whose graphs differed from a cached one's
	keyBuf     []int // scratch for traceKeyOf
	// varRetraces counts the retraces of a reassigned variable, by
	// variable (warnVarRetrace).
	varRetraces map[string]int
}

type traceEntry struct {
	key    traceKey
	fn     any    // keeps the step function (and so its address) alive
	inputs string // replica 0's input shapes, for the retrace warning
	tr     *trace
}

// find returns the index of the entry for k, or -1; a stale entry is
// dropped, and when a variable its step function reads was reassigned, or
// a function or method it calls redefined, fn and v name the step function
// and what changed.
func (c *traceCache) find(k *traceKey) (i int, fn string, v *stepdeps.Dep) {
	for i := range c.entries {
		e := &c.entries[i]
		if !e.key.equal(k) {
			continue
		}
		if v = e.tr.deps.changed(); v != nil || e.tr.trainabilityChanged() {
			fn = e.tr.deps.fn
			e.tr.close()
			c.entries = slices.Delete(c.entries, i, i+1)
			return -1, fn, v
		}
		return i, "", nil
	}
	return -1, "", nil
}

// front moves entry i first and returns its trace.
func (c *traceCache) front(i int) *trace {
	e := c.entries[i]
	copy(c.entries[1:i+1], c.entries[:i])
	c.entries[0] = e
	return e.tr
}

func (c *traceCache) put(k traceKey, fn any, in *stepInputs, tr *trace) {
	k.shapes = slices.Clone(k.shapes)
	if len(c.entries) == traceCacheSize {
		c.entries[traceCacheSize-1].tr.close()
		c.entries = c.entries[:traceCacheSize-1]
	}
	c.entries = slices.Insert(c.entries, 0, traceEntry{key: k, fn: fn, inputs: shapesOf(in), tr: tr})
}

func (c *traceCache) clear() {
	for _, e := range c.entries {
		e.tr.close()
	}
	c.entries = nil
}

// shapesOf describes replica 0's inputs, e.g. "[32 784] [32]".
func shapesOf(in *stepInputs) string {
	parts := make([]string, len(in.args[0]))
	for i, a := range in.args[0] {
		parts[i] = fmt.Sprint(a.Shape)
	}
	return strings.Join(parts, " ")
}

// lookup returns the trace of stepFn for these inputs: a cached one, or a
// new one.
//
// A closure the cache has not seen may still be a step function it holds:
// a func literal written inside an outer function (TensorFlow's step_fn inside
// train_step) is a new closure each time the outer function runs, with the
// same code pointer as the last one. So when cached traces have
// the same type and input shapes, the new closure's graphs are built
// first, and if they, their outputs and updates are those of a
// cached trace, that trace is reused and now answers to the new closure, as
// tf.function reuses a concrete function: the step function is called (once
// per replica) but nothing is compiled. Otherwise the graphs are compiled.
func (s *Mirrored) lookup(stepFn any, fn reflect.Value, in *stepInputs) (*trace, error) {
	key := traceKeyOf(stepFn, fn, in, s.traces.keyBuf)
	s.traces.keyBuf = key.shapes
	i, staleFn, staleVar := s.traces.find(&key)
	if i >= 0 {
		// A hit breaks a run of retraces: a notebook may well define several
		// step functions with the same signature, each traced once and then
		// reused.
		s.traces.lookalikes = 0
		return s.traces.front(i), nil
	}
	tr, err := s.build(fn, in)
	if err != nil {
		return nil, err
	}
	if i := s.traces.match(tr, &key); i >= 0 {
		e := &s.traces.entries[i]
		e.key.code, e.key.closure, e.fn = key.code, key.closure, stepFn
		// The trace now answers to a function that may read other
		// variables: watch those, as they are now that it has traced.
		e.tr.deps.watch(key.code)
		return s.traces.front(i), nil
	}
	for i := range s.traces.entries {
		if s.traces.entries[i].key.lookalike(&key) {
			s.traces.lookalikes++
			break
		}
	}
	// A function traced before for other shapes retraces: say so, once.
	var before string
	for _, e := range s.traces.entries {
		if e.key.code == key.code && e.key.closure == key.closure && e.key.typ == key.typ {
			before = e.inputs
		}
	}
	if err := s.compile(tr); err != nil {
		return nil, err
	}
	tr.deps.watch(key.code)
	s.traces.put(key, stepFn, in, tr)
	if staleVar != nil {
		s.warnVarRetrace(staleFn, staleVar)
	}
	switch {
	case before != "" && !s.warnedShapes:
		s.warnedShapes = true
		fmt.Fprintf(s.warn, "strategy: warning: retracing the step function: its input shapes changed from %s to %s; "+
			"each new shape traces again (DistributeDataset pads a partial last batch, so one batch size traces once)\n", before, shapesOf(in))
	case s.traces.lookalikes >= retraceWarnAt && !s.warnedNew:
		s.warnedNew = true
		fmt.Fprintf(s.warn, "strategy: warning: %d new step functions with the same inputs traced into different graphs; "+
			"a func literal that captures changing values (a loop variable, a constant) is a new function each time, "+
			"so every step retraces: define the step function once and pass values that change as inputs\n", retraceWarnAt)
	}
	return tr, nil
}

// retraceWarnAt is how many traces of look-alike step functions (same type
// and shapes; another closure and another graph) make Run warn, as
// TensorFlow warns about excessive retracing.
const retraceWarnAt = 5

// match returns the index of a cached look-alike of key whose trace tr,
// built but not compiled, repeats replica by replica, or -1.
func (c *traceCache) match(tr *trace, key *traceKey) int {
	for i := range c.entries {
		e := &c.entries[i]
		if !e.key.lookalike(key) || !tr.result.equal(e.tr.result) || e.tr.stale() {
			continue
		}
		same := true
		for r, rt := range tr.replicas {
			same = same && rt.sameAs(e.tr.replicas[r])
		}
		if same {
			return i
		}
	}
	return -1
}

// sameAs reports whether a replica's new trace computes what cached's does:
// the same graph, outputs and optimizer updates.
func (rt *replicaTrace) sameAs(cached *replicaTrace) bool {
	c := rt.ctx
	if !c.g.Same(cached.ctx.g) || len(rt.outputs) != len(cached.outputs) || len(c.updates) != len(cached.ctx.updates) ||
		(c.count == nil) != (cached.ctx.count == nil) {
		return false
	}
	for i, o := range rt.outputs {
		if o.Name() != cached.outputs[i].Name() {
			return false
		}
	}
	for k, u := range c.updates {
		v := cached.ctx.updates[k]
		if u.Name != v.Name || !slices.Equal(u.Vars, v.Vars) || isSplit(u) != isSplit(v) {
			return false
		}
		for i, g := range u.Grads {
			if g.Name() != v.Grads[i].Name() {
				return false
			}
		}
	}
	return true
}

// isSplit reports whether u's update may be applied in parts (a Split).
func isSplit(u Registration) bool {
	_, ok := u.Update.(Split)
	return ok
}

// WithWarnings sets where the strategy writes its warnings (default
// os.Stderr, which a notebook shows in the running cell); nil discards them.
func WithWarnings(w io.Writer) Option {
	if w == nil {
		w = io.Discard
	}
	return func(c *config) { c.warn = w }
}
