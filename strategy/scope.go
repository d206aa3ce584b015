package strategy

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gotrain/gotrain/graph"
)

// scopes is the stack of current strategies. A notebook runs one cell at a
// time, so one process-wide stack is the model (TensorFlow keeps one per
// thread); the mutex only keeps the race detector and stray goroutines honest.
var scopes struct {
	sync.Mutex
	stack    []*Mirrored
	replica  *ReplicaContext // set while a step function is being traced
	unscoped map[string]int  // UniqueName counters outside any scope
}

func init() { scopes.unscoped = make(map[string]int) }

// Scope runs fn with s as the current strategy: variables created during fn
// (by layers and optimizers, through CreateVariable) are mirrored variables of
// s. Scopes nest; entering the scope of a different strategy while one is
// current panics, as TensorFlow does.
//
// If fn panics, the strategy remembers it until a later Scope finishes: a
// step that then fails on a nil value (a model or optimizer fn was to
// assign) says so, instead of only "nil pointer dereference".
func (s *Mirrored) Scope(fn func()) {
	s.checkOpen()
	pushScope(s)
	defer popScope()
	done := false
	defer func() { s.setScopeFailed(!done) }()
	fn()
	done = true
}

func (s *Mirrored) setScopeFailed(failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.scopeFailed = failed
}

// nilHint adds to a step function's panic the likely cause when the panic
// is about a nil value and the last Scope panicked, since a Scope that
// panics leaves the models and optimizers it was to assign nil.
func (s *Mirrored) nilHint(err error) error {
	s.mu.Lock()
	failed := s.mu.scopeFailed
	s.mu.Unlock()
	if !failed || !strings.Contains(err.Error(), "nil") {
		return err
	}
	return fmt.Errorf("%w; an earlier s.Scope(func() { ... }) panicked before it finished, so a model, layer or optimizer it was to assign may still be nil: run that cell again", err)
}

func pushScope(s *Mirrored) {
	scopes.Lock()
	defer scopes.Unlock()
	if n := len(scopes.stack); n > 0 && scopes.stack[n-1] != s {
		panic(usageError("Scope: %v is current; leave its scope before entering the scope of %v", scopes.stack[n-1], s))
	}
	scopes.stack = append(scopes.stack, s)
}

func popScope() {
	scopes.Lock()
	defer scopes.Unlock()
	scopes.stack = scopes.stack[:len(scopes.stack)-1]
}

// Current returns the strategy whose Scope (or Run) is executing, or nil.
func Current() *Mirrored {
	scopes.Lock()
	defer scopes.Unlock()
	if n := len(scopes.stack); n > 0 {
		return scopes.stack[n-1]
	}
	return nil
}

// CurrentReplicaContext returns the context of the replica whose step
// function is being traced, or nil outside a trace (like
// tf.distribute.get_replica_context). Libraries that build graph nodes for a
// step, such as nn.ComputeAverageLoss, use it.
func CurrentReplicaContext() *ReplicaContext {
	scopes.Lock()
	defer scopes.Unlock()
	return scopes.replica
}

// enterTrace makes s current and ctx the replica context for one replica's
// trace; the returned func undoes both.
func enterTrace(s *Mirrored, ctx *ReplicaContext) (leave func()) {
	scopes.Lock()
	scopes.stack = append(scopes.stack, s)
	prev := scopes.replica
	scopes.replica = ctx
	scopes.Unlock()
	return func() {
		scopes.Lock()
		scopes.stack = scopes.stack[:len(scopes.stack)-1]
		scopes.replica = prev
		scopes.Unlock()
	}
}

// CreateVariable creates a variable under the current strategy (a mirrored
// variable of the strategy whose Scope or Run is executing) or, outside any
// scope, an unscoped Float32 variable that no strategy will let a step read.
// init may be nil (zeros). It panics if len(init) does not match shape.
func CreateVariable(name string, shape []int, init []float64) *graph.Variable {
	if s := Current(); s != nil {
		return s.CreateVariable(name, shape, init)
	}
	return graph.NewVariable(name, shape, graph.Float32, init)
}

// UniqueName returns a layer name unique within the current strategy (base,
// base_1, base_2, ...), or within the unscoped names outside any scope.
func UniqueName(base string) string {
	if s := Current(); s != nil {
		return s.UniqueName(base)
	}
	scopes.Lock()
	defer scopes.Unlock()
	return nextName(scopes.unscoped, base)
}

// checkVariable returns an error unless v was created under s.
func (s *Mirrored) checkVariable(v *graph.Variable) error {
	if s.owns(v) {
		return nil
	}
	if other := live.owner(v); other != nil {
		return &wrapped{kind: ErrScope, msg: fmt.Sprintf(
			"strategy: variable %q belongs to another strategy (%v); build the model inside this strategy's Scope", v.Name(), other)}
	}
	return &wrapped{kind: ErrScope, msg: fmt.Sprintf(
		"strategy: variable %q was created outside strategy.Scope; create the model inside s.Scope(func() { ... })", v.Name())}
}
