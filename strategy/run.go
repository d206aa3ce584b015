package strategy

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernels"
)

var (
	nodeType    = reflect.TypeFor[*graph.Node]()
	ctxType     = reflect.TypeFor[*ReplicaContext]()
	nodesType   = reflect.TypeFor[[]*graph.Node]()
	testHookRun func(replica int) error // set by tests to fail a replica's program
)

// worker is a replica's persistent goroutine: it runs the jobs Run hands it,
// one at a time, until Close closes jobs.
type worker struct {
	jobs    chan func()
	running atomic.Bool // a job is executing, for Close's audit
	pinned  bool        // locked to its OS thread; only its goroutine uses it
}

func (w *worker) loop(wg *sync.WaitGroup) {
	defer wg.Done()
	for job := range w.jobs {
		w.running.Store(true)
		job()
		w.running.Store(false)
	}
	w.pin(false)
}

// pin locks the worker's goroutine to its OS thread, or unlocks it, until
// the next call; it must run on the worker's goroutine.
//
// A replica whose step is long keeps one OS thread, as a device keeps its
// thread in TensorFlow. Unlocked, the replicas' goroutines change threads at
// every step, and in about half of the steps of a 2-replica MLP on two cores
// one replica ran 1.3 to 1.8 ms longer than the other, as if the two had
// shared a core for that long (the step median went from 5.4 to 7.2 ms). A
// short step stays unlocked: waking a locked goroutine hands the processor
// to its own thread, and the seed's 10-16-2 step went from 21 to 56-68 µs.
func (w *worker) pin(on bool) {
	if on == w.pinned {
		return
	}
	if on {
		runtime.LockOSThread()
	} else {
		runtime.UnlockOSThread()
	}
	w.pinned = on
}

// onReplicas runs fn(r) on every replica's goroutine concurrently and waits
// for all of them; a panic becomes that replica's error. pin says whether
// the goroutines keep their OS threads (see worker.pin).
//
// The jobs go out last replica first. A job handed to a sleeping worker
// waits for the scheduler, the first one handed out most (the caller's
// processor runs the last one readied when the caller parks; the others
// wait for another thread to take them). In a 2-replica MLP step on two
// cores (784-512-512-10, batch 256) sent first to last, replica 0's job
// started more than 250 µs after the send in 22-29% of the steps (2.3-2.8
// ms at the 90th percentile) while replica 1 waited at the barrier; sent
// last to first, replica 1's job started that late in 2.5-5% of the steps.
// Over 3 runs of 30 interleaved rounds the step's 90th percentile went from
// 7.5-9.2 ms to 5.1-9.1 ms and the throughput rose 7-8%. Why replica 0
// waits longer than replica 1 when sent first is measured, not explained.
func (s *Mirrored) onReplicas(pin bool, fn func(r int) error) []error {
	errs := make([]error, len(s.workers))
	var wg sync.WaitGroup
	wg.Add(len(s.workers))
	for r := len(s.workers) - 1; r >= 0; r-- {
		w := s.workers[r]
		w.jobs <- func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[r] = panicError(v)
				}
			}()
			w.pin(pin)
			errs[r] = fn(r)
		}
	}
	wg.Wait()
	return errs
}

// replicaFailure returns a ReplicaError for the lowest failed replica, or nil.
func replicaFailure(phase string, errs []error) error {
	var first *ReplicaError
	for r, err := range errs {
		if err == nil {
			continue
		}
		if first == nil {
			first = &ReplicaError{Replica: r, Phase: phase, Err: err}
		} else {
			first.Others++
		}
	}
	if first == nil {
		return nil
	}
	return first
}

// Run runs one step: stepFn on every replica, each on its shard of args, then
// the optimizers' merged updates. It returns each replica's outputs. stepFn is
// a function taking an optional *ReplicaContext and then one *graph.Node (or
// nn.Tensor) per tensor argument, and returning a *graph.Node, a slice of
// them, several of them, or a struct or map of them. It is called through
// reflection, only when Run traces (see the package doc), so it may be an
// interpreted closure.
//
// args are batches from a DistributedIterator (each contributes its
// components, split by replica), PerReplica values (one per replica, from
// NewPerReplica, or Broadcast for the same value on every replica) or
// scalar data.Tensor values (the same for every replica). A data.Tensor
// with a batch axis is refused on a strategy of several replicas (TryRun's
// error wraps ErrUsage): every replica would train on the whole batch.
// With one replica it is the replica's batch.
//
// Run is a safe point: a pending interrupt panics with
// safepoint.ErrInterrupted before anything runs. Any other failure panics
// with the error TryRun would return; the variables are then unchanged.
func (s *Mirrored) Run(stepFn any, args ...any) PerReplica {
	out, err := s.TryRun(stepFn, args...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryRun is Run for compiled callers: it returns the step's failure instead
// of panicking. The error is a *ReplicaError when a replica failed (naming
// the replica and the graph scope), wraps ErrScope when the step used a
// variable of no or another strategy, wraps ErrUsage for arguments or a step
// function Run cannot use, and is safepoint.ErrInterrupted on an interrupt.
// Nothing was applied when it returns an error. It panics with ErrClosed
// after Close.
func (s *Mirrored) TryRun(stepFn any, args ...any) (PerReplica, error) {
	s.checkOpen()
	if err := safepoint.Err(); err != nil {
		return PerReplica{}, err
	}
	if CurrentReplicaContext() != nil {
		// runMu is held by the Run that is tracing: calling Run here would
		// deadlock.
		return PerReplica{}, usageError("Run: called from a step function while it is traced; call Run from the training loop")
	}
	fn := reflect.ValueOf(stepFn)
	if fn.Kind() != reflect.Func || fn.IsNil() {
		return PerReplica{}, usageError("Run: want a step function, got %T", stepFn)
	}
	in, err := s.stepInputs(args)
	if err != nil {
		return PerReplica{}, err
	}
	if err := checkStepType(fn.Type(), len(in.args[0])); err != nil {
		return PerReplica{}, err
	}

	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.checkOpen()
	tr, err := s.lookup(stepFn, fn, in)
	if err != nil {
		return PerReplica{}, err
	}
	return s.execute(tr, in)
}

// stepInputs is Run's arguments sorted out by replica.
type stepInputs struct {
	args  [][]data.Tensor // [replica][tensor argument]
	batch *batchInfo      // nil if no argument is a batch
	masks []data.Tensor   // [replica], nil if no batch
}

func (s *Mirrored) stepInputs(args []any) (*stepInputs, error) {
	n := s.NumReplicasInSync()
	in := &stepInputs{args: make([][]data.Tensor, n)}
	for i, a := range args {
		switch a := a.(type) {
		case *PerReplicaBatch:
			if a == nil || a.NumReplicas() != n {
				return nil, usageError("Run: argument %d: want a batch for %d replicas, got %v", i, n, batchReplicas(a))
			}
			if in.batch != nil && in.batch.rows != a.rows {
				return nil, usageError("Run: argument %d: batch has %d rows per replica, an earlier batch %d", i, a.rows, in.batch.rows)
			}
			if in.batch == nil {
				in.batch = &batchInfo{rows: a.rows, real: slices.Clone(a.real), count: a.count}
				in.masks = a.masks
			}
			for r := range n {
				in.args[r] = append(in.args[r], a.shards[r]...)
			}
		case PerReplica:
			if err := addPerReplica(in, i, a); err != nil {
				return nil, err
			}
		case *PerReplica:
			if a == nil {
				return nil, usageError("Run: argument %d: want values, got a nil *PerReplica", i)
			}
			if err := addPerReplica(in, i, *a); err != nil {
				return nil, err
			}
		case data.Tensor:
			if a.Len() != len(a.Data) {
				return nil, usageError("Run: argument %d: tensor of shape %v holds %d values", i, a.Shape, len(a.Data))
			}
			if len(a.Shape) > 0 && n > 1 {
				return nil, undistributed(i, a, n)
			}
			for r := range n {
				in.args[r] = append(in.args[r], a)
			}
		default:
			return nil, usageError("Run: argument %d: want a batch from DistributedIterator.Batch, a PerReplica or a data.Tensor, got %T", i, a)
		}
	}
	if rows, ok := commonRows(in.args); in.batch == nil && ok {
		// Plain tensors (or per-replica values of one shape): every row is
		// real, on every replica.
		in.batch = &batchInfo{rows: rows, real: make([]int, n), count: rows * n}
		in.masks = make([]data.Tensor, n)
		ones := data.Zeros(rows)
		for i := range ones.Data {
			ones.Data[i] = 1
		}
		for r := range n {
			in.batch.real[r] = rows
			in.masks[r] = ones
		}
	}
	return in, nil
}

// undistributed is the error for a plain tensor with a batch axis given to
// a strategy of several replicas: each replica would run on all of it, so
// the summed gradients and reduced losses would be n times too large (the
// pitfall of forgetting to distribute the dataset, issue 14).
func undistributed(i int, t data.Tensor, n int) error {
	return usageError("Run: argument %d: a data.Tensor of shape %v is not distributed, so each of the %d replicas would run on all %d rows; "+
		"iterate s.DistributeDataset(ds) and pass it.Batch(), or pass s.Broadcast(t) to give every replica the same value on purpose", i, t.Shape, n, t.Shape[0])
}

// commonRows returns the leading dimension of the first argument when every
// replica's first argument has one and they agree.
func commonRows(args [][]data.Tensor) (int, bool) {
	rows := -1
	for _, a := range args {
		if len(a) == 0 || len(a[0].Shape) == 0 || (rows >= 0 && a[0].Shape[0] != rows) {
			return 0, false
		}
		rows = a[0].Shape[0]
	}
	return rows, true
}

func batchReplicas(b *PerReplicaBatch) string {
	if b == nil {
		return "nil"
	}
	return fmt.Sprintf("one for %d", b.NumReplicas())
}

func addPerReplica(in *stepInputs, i int, p PerReplica) error {
	if p.parts != nil {
		return usageError("Run: argument %d: want a single-valued PerReplica, got one with %d parts", i, len(p.parts))
	}
	if len(p.values) != len(in.args) {
		return usageError("Run: argument %d: want %d replica values, got %d", i, len(in.args), len(p.values))
	}
	for r, v := range p.values {
		if v.Len() != len(v.Data) {
			return usageError("Run: argument %d: replica %d's tensor of shape %v holds %d values", i, r, v.Shape, len(v.Data))
		}
		in.args[r] = append(in.args[r], v)
	}
	return nil
}

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
	grads    []Grad      // scratch handed to Update.Apply
	count    [1]float64  // scratch for the true-example-count placeholder; Feed copies it
	coll     *collective // the replicas' all-reductions inside the step
	split    splitPlan   // how the replicas share the split updates
	barrier  *stepBarrier
	checks   [][]numCheck // [replica]; nil unless the strategy checks numerics

	// The variables the step reads and whether each was trainable when it
	// was traced: the gradients and updates registered depend on it, so a
	// change (freezing a layer) makes the trace stale.
	trainable    []*graph.Variable
	wasTrainable []bool
	bufs32       [][]float32
	bufs64       [][]float64
}

// stale reports whether a variable the step reads changed trainability since
// the trace: its gradients and optimizer updates were registered for the old
// state (a frozen layer would still be updated), so the step must retrace.
func (tr *trace) stale() bool {
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
// (an interpreted closure and lazily built layers are not safe to run
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
func (s *Mirrored) compile(tr *trace) error {
	for r, rt := range tr.replicas {
		if err := rt.compile(); err != nil {
			return traceFailure(r, err)
		}
	}
	if err := tr.checkAligned(); err != nil {
		return err
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

// compile compiles the replica's program: one program computes the outputs
// and every registered gradient; all-reductions happen inside it
// (graph.AllReduce).
func (rt *replicaTrace) compile() (err error) {
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
	rt.prog, err = g.Compile(final...)
	return err
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
	tr.split = planSplit(tr)
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

// execute runs one traced step on every replica and applies the updates.
// Each replica runs its program, copies its outputs, waits at the barrier
// for the others and then sums and applies its parts of the split updates;
// the other updates are applied after the replicas, on this goroutine.
func (s *Mirrored) execute(tr *trace, in *stepInputs) (PerReplica, error) {
	tr.count[0] = 0
	if in.batch != nil {
		tr.count[0] = float64(in.batch.count)
	}
	if err := tr.checkUpdates(); err != nil {
		return PerReplica{}, err
	}
	if err := tr.beginSplit(); err != nil {
		return PerReplica{}, err
	}
	tr.coll.reset()
	tr.barrier.reset()
	vals := tr.newOutputs()
	// A step with updates to share is long enough to pin the replicas'
	// threads (splitMin).
	errs := s.onReplicas(len(tr.split.split) > 0, func(r int) error {
		err := tr.runReplica(r, in, vals)
		if err == nil && tr.checks != nil {
			err = tr.checkNumerics(r, vals)
		}
		if len(tr.split.split) == 0 {
			return err
		}
		if err != nil {
			tr.barrier.wait(true)
			return err
		}
		if !tr.barrier.wait(false) {
			return nil // another replica failed: nothing is applied
		}
		return tr.applyParts(r)
	})
	for r, err := range errs {
		var ae applyError
		if errors.As(err, &ae) {
			return PerReplica{}, &ReplicaError{Replica: r, Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", ae.err)}
		}
	}
	if in.batch != nil {
		for r, err := range errs {
			if err != nil { // labelExample allocates
				errs[r] = labelExample(err, r, in.batch)
			}
		}
	}
	if err := replicaFailure("run", rootCauses(errs)); err != nil {
		var re *ReplicaError
		if errors.As(err, &re) && errors.Is(re.Err, ErrNonFinite) {
			re.Phase = "check"
		}
		return PerReplica{}, err
	}
	if err := tr.applyUpdates(); err != nil {
		return PerReplica{}, err
	}
	return tr.outputs(in, vals), nil
}

// labelExample rewrites a label error of replica r's program, which counts
// rows in the replica's shard, to name the example of the global batch, the
// row a user can find in the dataset (issue 14). Other errors pass as is.
func labelExample(err error, r int, b *batchInfo) error {
	var le *graph.LabelError
	if !errors.As(err, &le) || le.Row >= b.real[r] {
		return err
	}
	global := le.Row
	for q := range r {
		global += b.real[q]
	}
	where := ""
	var ge *graph.Error
	if errors.As(err, &ge) {
		where = strings.TrimSuffix(strings.TrimPrefix(ge.Error(), "graph: "), ge.Msg)
	}
	return &exampleError{err: err, msg: fmt.Sprintf("%sexample %d of the global batch (row %d of the replica's shard): want a label in [0,%d), got %v",
		where, global, le.Row, le.Class, le.Label)}
}

// exampleError is a step error that names an example of the global batch;
// it unwraps to the program's error.
type exampleError struct {
	err error
	msg string
}

func (e *exampleError) Error() string { return e.msg }
func (e *exampleError) Unwrap() error { return e.err }

// runReplica feeds replica r's shard, runs its program and copies its
// outputs into vals. A failure aborts the step's collectives, where the
// other replicas might wait for this one.
func (tr *trace) runReplica(r int, in *stepInputs, vals [][]data.Tensor) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
		if err != nil {
			tr.coll.abort()
		}
	}()
	if testHookRun != nil {
		if err := testHookRun(r); err != nil {
			return err
		}
	}
	// Each replica converts its own shard (float64 to the program's type)
	// on its own core, so it adds nothing to the step's serial part.
	rt := tr.replicas[r]
	p := rt.prog
	for k, n := range rt.inputs {
		p.Feed(n, in.args[r][k].Data)
	}
	if rt.mask != nil {
		p.Feed(rt.mask, in.masks[r].Data)
	}
	if c := rt.ctx.count; c != nil {
		p.Feed(c, tr.count[:])
	}
	if err := p.Run(); err != nil {
		return err
	}
	tr.copyOutputs(r, vals)
	return nil
}

// beginSplit calls Begin of every split update, before the replicas start.
func (tr *trace) beginSplit() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("preparing the optimizer update: %w", panicError(v))}
		}
	}()
	for _, k := range tr.split.split {
		tr.replicas[0].ctx.updates[k].Split.Begin()
	}
	return nil
}

// applyUpdates finishes the split updates (End) and applies the others: it
// sums each of their gradients across replicas, in a fixed order, and calls
// each Apply once with the sums.
func (tr *trace) applyUpdates() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", panicError(v))}
		}
	}()
	ups := tr.replicas[0].ctx.updates
	for _, k := range tr.split.split {
		ups[k].Split.End()
	}
	for _, k := range tr.split.rest {
		u := ups[k]
		tr.grads = tr.grads[:0]
		for i, v := range u.Vars {
			for r, rt := range tr.replicas {
				gn := rt.ctx.updates[k].Grads[i]
				tr.bufs32[r] = rt.prog.F32(gn)
				tr.bufs64[r] = rt.prog.F64(gn)
			}
			g := Grad{Var: v}
			if tr.bufs32[0] != nil {
				kernels.AllReduceSum(tr.bufs32)
				g.F32 = tr.bufs32[0]
			} else {
				kernels.AllReduceSum(tr.bufs64)
				g.F64 = tr.bufs64[0]
			}
			tr.grads = append(tr.grads, g)
		}
		u.Apply(tr.grads)
	}
	return nil
}

// newOutputs makes the step's output table, [output][replica], that the
// replicas fill.
func (tr *trace) newOutputs() [][]data.Tensor {
	vals := make([][]data.Tensor, len(tr.replicas[0].outputs))
	for i := range vals {
		vals[i] = make([]data.Tensor, len(tr.replicas))
	}
	return vals
}

// copyOutputs copies replica r's outputs to the host, before any update
// overwrites a gradient the step returned: a step's outputs are its own
// replica's values, as in TensorFlow.
func (tr *trace) copyOutputs(r int, vals [][]data.Tensor) {
	rt := tr.replicas[r]
	for i, o := range rt.outputs {
		vals[i][r] = data.Tensor{Shape: o.Shape(), Data: rt.prog.Value(o)}
	}
}

// outputs arranges the copied outputs as the step function returned them.
func (tr *trace) outputs(in *stepInputs, vals [][]data.Tensor) PerReplica {
	parts := make([]PerReplica, len(vals))
	for i := range parts {
		parts[i] = PerReplica{values: vals[i], batch: in.batch}
	}
	switch tr.result.kind {
	case resultNone:
		return PerReplica{}
	case resultSingle:
		return parts[0]
	case resultNamed:
		return PerReplica{parts: parts, names: tr.result.names, batch: in.batch}
	}
	return PerReplica{parts: parts, batch: in.batch}
}
