package strategy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"sort"

	"github.com/gotrain/gotrain/graph"
)

var (
	nodeType  = reflect.TypeFor[*graph.Node]()
	ctxType   = reflect.TypeFor[*ReplicaContext]()
	nodesType = reflect.TypeFor[[]*graph.Node]()
)

// checkStepType checks stepFn's parameters: an optional *ReplicaContext, then
// one tensor per argument.
func checkStepType(t reflect.Type, tensors int) error {
	params := t.NumIn()
	first := 0
	if params > 0 && t.In(0) == ctxType {
		first = 1
	}
	want := func() error {
		return usageError("Run: step function %v: want func(*strategy.ReplicaContext, then %d tensors (*graph.Node or nn.Tensor))", t, tensors)
	}
	if t.IsVariadic() {
		if t.In(params-1) != nodesType || params-1-first > tensors {
			return want()
		}
		params--
	} else if params-first != tensors {
		return usageError("Run: step function %v takes %d tensors, got %d tensor arguments", t, params-first, tensors)
	}
	for i := first; i < params; i++ {
		if !nodeType.AssignableTo(t.In(i)) {
			return want()
		}
	}
	return nil
}

// Traces returns how many traces the strategy holds (tests and the notebook
// use it to see retracing).
func (s *Mirrored) Traces() int {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	return len(s.traces.entries)
}

// trace is one step function compiled for every replica.
type trace struct {
	replicas []*replicaTrace
	result   resultShape
	count    [1]float64  // scratch for the true-example-count placeholder; Feed copies it
	coll     *collective // the replicas' all-reductions inside the step
	plan     updatePlan  // how the updates are applied
	barrier  *stepBarrier
	// On several workers with split updates, where the replicas meet after
	// summing their parts locally (acrossParts), and what the workers
	// agreed there; agreed is written by the last replica to arrive, read
	// by the goroutine calling Run after the replicas.
	acrossBarrier *stepBarrier
	agreed        agreement
	checks        [][]numCheck // [replica]; nil unless the strategy checks numerics
	gpu           *gpuStep     // the device plan of GPU replicas; nil on CPUs

	// The variables the step reads and whether each was trainable when it
	// was traced: the gradients and updates registered depend on it, so a
	// change (freezing a layer) makes the trace stale.
	trainable    []*graph.Variable
	wasTrainable []bool
	bufs32       [][]float32
	bufs64       [][]float64

	sig uint64 // signature, computed at its first call (several workers only); 0 before

	deps stepVars // the session variables the step function reads
}

// stale reports whether a variable the step reads changed trainability since
// the trace: its gradients and optimizer updates were registered for the old
// state (a frozen layer would still be updated), so the step must retrace;
// or whether a session variable the step function reads was reassigned (an
// optimizer, a model, a value folded into the graph).
func (tr *trace) stale() bool { return tr.trainabilityChanged() || tr.deps.changed() != nil }

// trainabilityChanged reports whether a variable the step reads changed
// trainability since the trace.
func (tr *trace) trainabilityChanged() bool {
	for i, v := range tr.trainable {
		if v.Trainable() != tr.wasTrainable[i] {
			return true
		}
	}
	return false
}

type replicaTrace struct {
	ctx     *ReplicaContext
	inputs  []*graph.Node
	mask    *graph.Node
	outputs []*graph.Node
	prog    *graph.Program // outputs and gradients
}

// traceFailure is the error of a trace that failed on replica r: misuse and
// scope errors as they are, anything else as the replica's error.
func traceFailure(r int, err error) error {
	if errors.Is(err, ErrScope) || errors.Is(err, ErrUsage) {
		return err
	}
	return &ReplicaError{Replica: r, Phase: "trace", Err: err}
}

// build calls the step function once per replica, on the calling goroutine
// (a user's closure and lazily built layers are not safe to run
// concurrently), building each replica's graph; compile then compiles them.
func (s *Mirrored) build(fn reflect.Value, in *stepInputs) (*trace, error) {
	tr := &trace{replicas: make([]*replicaTrace, len(in.args)), coll: newCollective(len(in.args))}
	for r := range in.args {
		rt, shape, err := s.traceReplica(fn, r, in, tr.coll)
		if err != nil {
			return nil, traceFailure(r, err)
		}
		if r == 0 {
			tr.result = shape
		} else if !shape.equal(tr.result) {
			return nil, &ReplicaError{Replica: r, Phase: "trace", Err: fmt.Errorf("step returned %v, replica 0 returned %v", shape, tr.result)}
		}
		tr.replicas[r] = rt
	}
	return tr, nil
}

// compile compiles every replica's program of a built trace and plans how
// its updates are applied.
func (s *Mirrored) compile(tr *trace) (err error) {
	defer func() {
		if err != nil {
			tr.close() // a device program's memory
		}
	}()
	for r, rt := range tr.replicas {
		if err := rt.compile(s.gpus, r); err != nil {
			return traceFailure(r, err)
		}
	}
	if err := tr.checkAligned(); err != nil {
		return err
	}
	if s.gpus != nil {
		return s.planGPU(tr)
	}
	tr.plan = planSplit(tr, !s.noDefer && !s.multi(), s.multi())
	if tr.plan.across != nil {
		tr.acrossBarrier = newStepBarrier(len(tr.replicas))
	}
	if s.checkNumerics {
		tr.checks = planChecks(tr)
	}
	return nil
}

// traceReplica calls the step function for replica r and builds its graph.
func (s *Mirrored) traceReplica(fn reflect.Value, r int, in *stepInputs, coll *collective) (rt *replicaTrace, shape resultShape, err error) {
	g := graph.New(s.dtype)
	ctx := &ReplicaContext{s: s, id: r, g: g, coll: replicaCollective{c: coll, r: r}}
	rt = &replicaTrace{ctx: ctx}
	leave := enterTrace(s, ctx)
	defer leave()
	defer func() {
		if v := recover(); v != nil {
			err = s.nilHint(panicError(v))
		}
	}()
	for k, a := range in.args[r] {
		rt.inputs = append(rt.inputs, g.Placeholder(fmt.Sprintf("input_%d", k), a.Shape...))
	}
	if in.batch != nil {
		rt.mask = g.Placeholder("mask", in.batch.rows)
		g.SetMask(rt.mask)
	}
	t := fn.Type()
	callArgs := make([]reflect.Value, 0, len(rt.inputs)+1)
	if t.NumIn() > 0 && t.In(0) == ctxType {
		callArgs = append(callArgs, reflect.ValueOf(ctx))
	}
	for _, n := range rt.inputs {
		p := len(callArgs)
		var pt reflect.Type
		if t.IsVariadic() && p >= t.NumIn()-1 {
			pt = t.In(t.NumIn() - 1).Elem()
		} else {
			pt = t.In(p)
		}
		callArgs = append(callArgs, reflect.ValueOf(n).Convert(pt))
	}
	results := fn.Call(callArgs)
	rt.outputs, shape, err = flattenResults(fn.Type(), results)
	if err != nil {
		return nil, shape, err
	}
	for _, o := range rt.outputs {
		if o.Graph() != g {
			return nil, shape, usageError("Run: step output %v is not a node of replica %d's graph", o, r)
		}
	}
	for _, v := range g.Variables() {
		if err := s.checkVariable(v); err != nil {
			return nil, shape, err
		}
	}
	return rt, shape, nil
}

// compile compiles the replica's program, on replica r's GPU when gpus is
// not nil: one program computes the outputs and every registered gradient;
// all-reductions happen inside it (graph.AllReduce).
func (rt *replicaTrace) compile(gpus *graph.GPUs, r int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	final := slices.Clone(rt.outputs)
	for _, u := range rt.ctx.updates {
		final = append(final, u.Grads...)
	}
	g := rt.ctx.g
	if len(final) == 0 {
		// A step with no outputs and no updates still runs (for its
		// collectives); compile something so there is a program.
		final = append(final, g.Const(0))
	}
	if gpus != nil {
		rt.prog, err = gpus.Compile(r, g, final...)
	} else {
		rt.prog, err = g.Compile(final...)
	}
	return err
}

// close frees the trace's device programs (a CPU program holds nothing to
// free); the trace must not run afterwards.
func (tr *trace) close() {
	for _, rt := range tr.replicas {
		if rt != nil && rt.prog != nil {
			rt.prog.Close()
		}
	}
}

// checkAligned checks that every replica registered the same updates and
// collectives, so they can be summed element by element.
func (tr *trace) checkAligned() error {
	c0 := tr.replicas[0].ctx
	for r, rt := range tr.replicas[1:] {
		c := rt.ctx
		fail := func(format string, args ...any) error {
			return &ReplicaError{Replica: r + 1, Phase: "trace", Err: fmt.Errorf(format, args...)}
		}
		if len(c.updates) != len(c0.updates) {
			return fail("step registered %d optimizer updates, replica 0 registered %d", len(c.updates), len(c0.updates))
		}
		for k, u := range c.updates {
			if !slices.Equal(u.Vars, c0.updates[k].Vars) {
				return fail("optimizer update %d (%s) updates other variables than on replica 0", k, u.Name)
			}
		}
	}
	if err := tr.checkCollectives(); err != nil {
		return err
	}
	tr.trainable = tr.replicas[0].prog.Graph().Variables()
	tr.wasTrainable = make([]bool, len(tr.trainable))
	for i, v := range tr.trainable {
		tr.wasTrainable[i] = v.Trainable()
	}
	n := len(tr.replicas)
	tr.bufs32 = make([][]float32, n)
	tr.bufs64 = make([][]float64, n)
	tr.barrier = newStepBarrier(n)
	return nil
}

// resultShape records how a step's outputs were structured, to rebuild it
// as a PerReplica.
type resultShape struct {
	kind  int // resultNone, resultSingle, resultList or resultNamed
	n     int
	names []string
}

const (
	resultNone = iota
	resultSingle
	resultList
	resultNamed
)

func (a resultShape) equal(b resultShape) bool {
	return a.kind == b.kind && a.n == b.n && slices.Equal(a.names, b.names)
}

func (a resultShape) String() string {
	switch a.kind {
	case resultNone:
		return "nothing"
	case resultSingle:
		return "one tensor"
	case resultList:
		return fmt.Sprintf("%d tensors", a.n)
	}
	return fmt.Sprintf("tensors named %v", a.names)
}

// flattenResults turns a step function's results into a list of nodes.
func flattenResults(t reflect.Type, results []reflect.Value) ([]*graph.Node, resultShape, error) {
	bad := func(v reflect.Value) error {
		return usageError("Run: step function %v returned %v; want a *graph.Node (nn.Tensor), a slice, a struct or a map[string] of them", t, v.Type())
	}
	node := func(v reflect.Value, what string) (*graph.Node, error) {
		for v.Kind() == reflect.Interface && !v.IsNil() {
			v = v.Elem()
		}
		if v.Type() != nodeType {
			return nil, bad(v)
		}
		n := v.Interface().(*graph.Node)
		if n == nil {
			return nil, usageError("Run: step function returned a nil tensor (%s)", what)
		}
		return n, nil
	}
	switch len(results) {
	case 0:
		return nil, resultShape{kind: resultNone}, nil
	case 1:
	default:
		nodes := make([]*graph.Node, len(results))
		for i, v := range results {
			n, err := node(v, fmt.Sprintf("result %d", i))
			if err != nil {
				return nil, resultShape{}, err
			}
			nodes[i] = n
		}
		return nodes, resultShape{kind: resultList, n: len(nodes)}, nil
	}
	v := results[0]
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	switch {
	case v.Type() == nodeType:
		n, err := node(v, "result")
		if err != nil {
			return nil, resultShape{}, err
		}
		return []*graph.Node{n}, resultShape{kind: resultSingle, n: 1}, nil
	case v.Kind() == reflect.Slice:
		nodes := make([]*graph.Node, v.Len())
		for i := range nodes {
			n, err := node(v.Index(i), fmt.Sprintf("element %d", i))
			if err != nil {
				return nil, resultShape{}, err
			}
			nodes[i] = n
		}
		return nodes, resultShape{kind: resultList, n: len(nodes)}, nil
	case v.Kind() == reflect.Struct:
		var nodes []*graph.Node
		var names []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				return nil, resultShape{}, usageError("Run: step result %v: field %s is unexported; export it", v.Type(), f.Name)
			}
			n, err := node(v.Field(i), "field "+f.Name)
			if err != nil {
				return nil, resultShape{}, err
			}
			nodes = append(nodes, n)
			names = append(names, f.Name)
		}
		return nodes, resultShape{kind: resultNamed, n: len(nodes), names: names}, nil
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		var names []string
		for _, k := range v.MapKeys() {
			names = append(names, k.String())
		}
		sort.Strings(names)
		nodes := make([]*graph.Node, len(names))
		for i, name := range names {
			n, err := node(v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key())), "key "+name)
			if err != nil {
				return nil, resultShape{}, err
			}
			nodes[i] = n
		}
		return nodes, resultShape{kind: resultNamed, n: len(nodes), names: names}, nil
	}
	return nil, resultShape{}, bad(v)
}

// signature hashes what the workers of a multi-worker strategy must agree
// on for a step: the updates (names, variables and their shapes, in order)
// and the outputs' shapes of replica 0's trace.
func (tr *trace) signature() uint64 {
	if tr.sig != 0 {
		return tr.sig
	}
	h := fnv.New64a()
	put := func(xs ...int) {
		var b [8]byte
		for _, x := range xs {
			binary.LittleEndian.PutUint64(b[:], uint64(x))
			h.Write(b[:])
		}
	}
	rt := tr.replicas[0]
	for _, u := range rt.ctx.updates {
		h.Write([]byte(u.Name))
		put(len(u.Vars))
		for _, v := range u.Vars {
			h.Write([]byte(v.Name()))
			put(v.Shape()...)
			put(-1)
		}
	}
	put(len(rt.outputs))
	for _, o := range rt.outputs {
		put(o.Shape()...)
		put(-1)
	}
	tr.sig = h.Sum64() | 1 // never 0, which means not computed yet
	return tr.sig
}
