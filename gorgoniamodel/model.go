package gorgoniamodel

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/errkind"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// ErrUsage is wrapped by the errors and panics of misuse: a build function
// that returns no loss, a parameter asked with two shapes, a model made
// outside a strategy's Scope.
var ErrUsage = errors.New("gorgoniamodel: misuse")

// BuildFunc builds one replica's graph: x is the replica's shard of the
// batch's first component, y of its second (the labels), or nil when the
// batch has one component. It returns the replica's loss, a scalar that
// depends on r.GlobalCount (r.AverageLoss makes one). It may return nil in
// an evaluation graph (r.Training() false) that asks for outputs.
type BuildFunc func(r *Replica, x, y *G.Node) *G.Node

// Model is a gorgonia model trained under a strategy: its build function,
// the parameters every replica's graph shares, and the machines built for
// each input shape. Create it with New inside the strategy's Scope. A
// Model is not safe for concurrent use.
type Model struct {
	s     *strategy.Mirrored
	name  string
	build BuildFunc
	vars  []*graph.Variable // the parameters, in creation order
	sets  []*machineSet
}

// New returns a model built by build on every replica of the current
// strategy, at the first Step or Evaluate for given input shapes (or at
// Build). Its parameters are named "gorgonia/NAME" ("gorgonia_1/NAME" for
// the second model of the strategy, …). It panics with an error wrapping
// ErrUsage outside a strategy's Scope or if build is nil.
func New(build BuildFunc) *Model {
	s := strategy.Current()
	if s == nil {
		panic(usageError("New: no strategy is current; create the model inside s.Scope(func() { ... })"))
	}
	if build == nil {
		panic(usageError("New: want a build function, got nil"))
	}
	useBLAS()
	return &Model{s: s, name: s.UniqueName("gorgonia"), build: build}
}

// Name returns the prefix of the model's parameter names.
func (m *Model) Name() string { return m.name }

// Variables returns the model's parameters, in creation order, so that
// nn.SaveCheckpoint and nn.RestoreCheckpoint take the model (the strategy's
// Variables include them too).
func (m *Model) Variables() []*graph.Variable { return slices.Clone(m.vars) }

// TrainableVariables returns the parameters Step updates: all of them.
func (m *Model) TrainableVariables() []*graph.Variable { return m.Variables() }

// Build creates the model's parameters without running a step, by building
// replica 0's graph for one example of the given shapes (each without the
// batch axis, one per batch component: []int{784}, []int{} for images and
// labels), as a restore into a fresh strategy needs (nn.RestoreCheckpoint).
// It returns the build function's error.
func (m *Model) Build(example ...[]int) error {
	shapes := make([][]int, len(example))
	for k, e := range example {
		shapes[k] = append([]int{1}, e...)
	}
	_, err := m.graph(0, shapes, true)
	return err
}

// Step runs one training step on every replica: each runs its graph on its
// shard of args (a batch from a DistributedIterator, as for strategy.Run),
// and opt applies one update from the gradients summed over replicas. It
// returns each replica's loss, whose Sum over replicas (s.Reduce) is the
// batch mean for a loss from Replica.AverageLoss, or, when the build
// function asked for outputs, named parts "loss" and each output. It panics
// with the error TryStep returns.
func (m *Model) Step(opt nn.Optimizer, args ...any) strategy.PerReplica {
	out, err := m.TryStep(opt, args...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryStep is Step returning its error: a *strategy.ReplicaError naming the
// replica when its build function or its machine failed (a shape mismatch
// names gorgonia's node or op), or the errors of strategy.RunExternal.
// Nothing was applied when it returns an error.
func (m *Model) TryStep(opt nn.Optimizer, args ...any) (strategy.PerReplica, error) {
	if opt == nil {
		return strategy.PerReplica{}, usageError("Step: want an optimizer, got nil")
	}
	set, err := m.machines(true, args)
	// A worker whose graphs failed must not leave the others waiting in
	// RunExternal's collectives.
	if err := m.s.AgreeFailure(err); err != nil {
		return strategy.PerReplica{}, err
	}
	step, ok := set.steps[opt]
	if !ok {
		up, err := hostUpdate(m.s, opt, set.reps[0].r.vars)
		if err != nil {
			return strategy.PerReplica{}, err
		}
		step = &strategy.ExternalStep{Replicas: set.ext, Updates: []strategy.Registration{up}, Outputs: set.outputs}
		set.steps[opt] = step
	}
	return m.s.RunExternal(step, args...)
}

// hostUpdate is nn.HostUpdate returning its panic as an error.
func hostUpdate(s *strategy.Mirrored, opt nn.Optimizer, vars []*graph.Variable) (u strategy.Registration, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return nn.HostUpdate(s, opt, vars), nil
}

// Evaluate runs the model's evaluation graphs (built with r.Training()
// false, without gradients) on every replica's shard of args, and returns
// their loss and outputs as Step does, applying nothing. It panics with the
// error TryEvaluate returns.
func (m *Model) Evaluate(args ...any) strategy.PerReplica {
	out, err := m.TryEvaluate(args...)
	if err != nil {
		panic(err)
	}
	return out
}

// TryEvaluate is Evaluate returning its error.
func (m *Model) TryEvaluate(args ...any) (strategy.PerReplica, error) {
	set, err := m.machines(false, args)
	if err := m.s.AgreeFailure(err); err != nil {
		return strategy.PerReplica{}, err
	}
	if set.eval == nil {
		set.eval = &strategy.ExternalStep{Replicas: set.ext, Outputs: set.outputs}
	}
	return m.s.RunExternal(set.eval, args...)
}

// machineSet is every replica's machine for one set of input shapes, for
// training or for evaluation.
type machineSet struct {
	training bool
	shapes   [][][]int // [replica][input]
	reps     []*machine
	ext      []strategy.ExternalReplica // reps, as RunExternal takes them
	outputs  []string                   // the PerReplica's part names; nil for the loss alone
	steps    map[nn.Optimizer]*strategy.ExternalStep
	eval     *strategy.ExternalStep
}

// machines returns the machines for args' shapes, building them the first
// time: replica 0's graph first, since it creates the parameters.
func (m *Model) machines(training bool, args []any) (*machineSet, error) {
	shapes, err := m.s.ExternalShapes(args...)
	if err != nil {
		return nil, err
	}
	for _, set := range m.sets {
		if set.training == training && sameShapes(set.shapes, shapes) {
			return set, nil
		}
	}
	set := &machineSet{training: training, shapes: shapes, steps: make(map[nn.Optimizer]*strategy.ExternalStep)}
	for r := range shapes {
		rep, err := m.graph(r, shapes[r], training)
		if err == nil {
			err = rep.check(set.reps)
		}
		var mc *machine
		if err == nil {
			mc, err = newMachine(rep)
		}
		if err != nil {
			return nil, &strategy.ReplicaError{Replica: m.s.WorkerID()*m.s.LocalReplicas() + r, Phase: "trace", Err: err}
		}
		set.reps = append(set.reps, mc)
		set.ext = append(set.ext, mc)
	}
	set.outputs = set.reps[0].names()
	m.sets = append(m.sets, set)
	return set, nil
}

func sameShapes(a, b [][][]int) bool {
	return slices.EqualFunc(a, b, func(x, y [][]int) bool {
		return slices.EqualFunc(x, y, slices.Equal[[]int])
	})
}

// graph calls the build function for replica r's graph with inputs of the
// given shapes, turning its panics into errors.
func (m *Model) graph(r int, shapes [][]int, training bool) (rep *Replica, err error) {
	if len(shapes) == 0 || len(shapes) > 2 {
		return nil, usageError("want batches of (inputs) or (inputs, labels), got %d components", len(shapes))
	}
	dt := tensor.Float32
	if m.s.DType() == graph.Float64 {
		dt = tensor.Float64
	}
	rep = &Replica{m: m, id: m.s.WorkerID()*m.s.LocalReplicas() + r, local: r, n: m.s.NumReplicasInSync(), g: G.NewGraph(), dt: dt, training: training}
	for k, sh := range shapes {
		if len(sh) == 0 {
			return nil, usageError("input %d is a scalar; the inputs of a gorgonia model are batches with a row per example", k)
		}
		name := "x"
		if k == 1 {
			name = "y"
		}
		t := tensor.New(tensor.WithShape(sh...), tensor.Of(dt))
		rep.inputs = append(rep.inputs, G.NewTensor(rep.g, dt, len(sh), G.WithShape(sh...), G.WithName(name), G.WithValue(t)))
	}
	rep.rows = shapes[0][0]
	defer func() {
		if v := recover(); v != nil {
			rep, err = nil, buildError(panicSite(), panicError(v))
		}
	}()
	var y *G.Node
	if len(rep.inputs) > 1 {
		y = rep.inputs[1]
	}
	rep.loss = m.build(rep, rep.inputs[0], y)
	return rep, nil
}

// param returns the model's variable full, creating it when this worker's
// replica 0 (local index r) asks for it the first time.
func (m *Model) param(r int, full string, shape []int, init Init) (*graph.Variable, error) {
	for _, v := range m.vars {
		if v.Name() != full {
			continue
		}
		if !slices.Equal(v.Shape(), shape) {
			return nil, usageError("Param %q: asked with shape %v, created with %v", full, shape, v.Shape())
		}
		return v, nil
	}
	if r != 0 {
		return nil, usageError("Param %q: replica %d asks for a parameter replica 0's graph does not have; build the same parameters on every replica", full, r)
	}
	var vals []float64
	if init != nil {
		vals = init(strategy.InitStream(m.s.Seed(), full), shape)
		if len(vals) != size(shape) {
			return nil, usageError("Param %q: the initializer gave %d values for shape %v, want %d", full, len(vals), shape, size(shape))
		}
	}
	v := m.s.CreateVariable(full, shape, vals)
	m.vars = append(m.vars, v)
	return v, nil
}

// check returns an error if the replica's graph is not one the bridge can
// run, or differs from the graphs of the replicas before it in parameters
// or outputs.
func (r *Replica) check(before []*machine) error {
	if r.training || r.loss != nil {
		if r.loss == nil {
			return usageError("the build function returned a nil loss")
		}
		if r.loss.Graph() != r.g {
			return usageError("the build function returned a loss of another graph than replica %d's", r.id)
		}
		if !r.loss.IsScalar() {
			return usageError("the build function returned a loss of shape %v; want a scalar", r.loss.Shape())
		}
	}
	if r.training && (r.invCount == nil || !dependsOn(r.g, r.loss, r.invCount)) {
		return usageError("the loss does not use r.AverageLoss (or r.GlobalCount): each replica's own mean would make the gradients summed over %d replicas %d times too large; return r.AverageLoss(perExampleLoss)", r.n, r.n)
	}
	if !r.training && r.loss == nil && len(r.outputs) == 0 {
		return usageError("the evaluation graph has no loss and no output; return a loss or call r.Output")
	}
	if r.training && len(r.vars) == 0 {
		return usageError("the graph has no parameters to train; make them with r.Param")
	}
	if len(before) == 0 {
		return nil
	}
	first := before[0].r
	if !slices.Equal(r.vars, first.vars) {
		return usageError("replica %d's graph has parameters %v, replica 0's %v; build the same graph on every replica", r.id, names(r.vars), names(first.vars))
	}
	if !slices.EqualFunc(r.outputs, first.outputs, func(a, b output) bool { return a.name == b.name }) {
		return usageError("replica %d's graph asks for other outputs than replica 0's", r.id)
	}
	return nil
}

// dependsOn reports whether n's value depends on target's in g.
func dependsOn(g *G.ExprGraph, n, target *G.Node) bool {
	seen := map[int64]bool{n.ID(): true}
	stack := []int64{n.ID()}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if id == target.ID() {
			return true
		}
		for it := g.From(id); it.Next(); {
			c := it.Node().ID()
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return false
}

func names(vars []*graph.Variable) []string {
	out := make([]string, len(vars))
	for i, v := range vars {
		out[i] = v.Name()
	}
	return out
}

func usageError(format string, args ...any) error {
	return errkind.New(ErrUsage, "gorgoniamodel: ", format, args...)
}

// buildError is the error of a build function that panicked at site; a
// misuse of this package keeps its kind and says "gorgoniamodel:" once.
func buildError(site string, err error) error {
	var ke *errkind.Error
	if errors.As(err, &ke) {
		return &errkind.Error{Msg: "gorgoniamodel: the build function" + site + ": " + strings.TrimPrefix(ke.Msg, "gorgoniamodel: "), Kind: ke.Kind}
	}
	return fmt.Errorf("gorgoniamodel: the build function%s: %w", site, err)
}

// panicSite returns ", at FILE:LINE" for the innermost frame of a panic
// that is neither the runtime's, gorgonia's nor this package's: the line of
// the build function that made gorgonia fail (in a notebook, the cell's
// line). It must be called from the deferred function that recovers, while
// the panicking frames are still on the stack.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "gorgonia.org/") &&
			!strings.HasPrefix(f.Function, "github.com/gotrain/gotrain/gorgoniamodel.") {
			return fmt.Sprintf(", at %s:%d", filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// panicError turns a recovered panic value into an error.
func panicError(v any) error {
	if err, ok := v.(error); ok {
		return err
	}
	return fmt.Errorf("panic: %v", v)
}
