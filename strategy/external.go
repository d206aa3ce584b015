package strategy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
	"github.com/gotrain/gotrain/internal/safepoint"
)

// ExternalReplica is one replica's step built by an engine other than
// package graph (package gorgoniamodel's gorgonia machines): RunExternal calls RunStep
// on the replica's goroutine with its shard, then reads the gradients it
// computed through Gradient.
type ExternalReplica interface {
	// RunStep computes the replica's outputs and the gradients of the step's
	// variables on its shard. The gradients must be this step's only: an
	// engine that accumulates into its gradient buffers clears them first.
	RunStep(in ExternalInput) ([]data.Tensor, error)
	// Gradient returns the replica's gradient of v from the last RunStep, in
	// v's dtype (F32 for a Float32 strategy, F64 for Float64), v.Len()
	// values. The strategy sums the replicas' buffers in place, so they hold
	// the cross-replica sum afterwards.
	Gradient(v *graph.Variable) Grad
}

// ExternalInput is what one replica's RunStep gets.
type ExternalInput struct {
	Replica int           // the replica's id, in [0, NumReplicasInSync), counted over every worker
	Args    []data.Tensor // the replica's shard of each tensor argument of RunExternal
	// Mask is [rows]: 1 for a real example and 0 for a row that pads a
	// short last batch. It is empty when no argument was a batch.
	Mask data.Tensor
	// GlobalCount is the number of real examples in the global batch, all
	// replicas together: a loss summed over the replica's real rows and
	// divided by it sums over replicas to the batch mean.
	GlobalCount float64
	// First is the position in the global batch, every worker's real rows
	// in replica order, of the replica's first row, for errors that name an
	// example.
	First int
}

// ExternalStep is a step RunExternal runs: one ExternalReplica per replica
// of this worker,
// the updates to apply after all of them succeeded, and the names of their
// outputs.
type ExternalStep struct {
	Replicas []ExternalReplica
	// Updates are applied as for a traced step: Check (of a Checker) before
	// the replicas run, then Apply once with each variable's gradient summed
	// over replicas in replica order. Their Grads must be nil (the
	// gradients come from ExternalReplica.Gradient) and a Split is applied
	// whole: the updates run on the goroutine calling RunExternal.
	Updates []Registration
	// Outputs names the replicas' outputs, aligned with what RunStep
	// returns; the PerReplica then has named parts (see PerReplica.Field).
	// With Outputs nil, one output is a single value and several are
	// positional parts.
	Outputs []string
}

// RunExternal is Run for a step built by another engine: the arguments are
// sharded, padded and masked as for Run, each replica's RunStep runs on the
// replica's goroutine, concurrently, and the updates are then applied once,
// from the gradients summed over replicas in replica order. It returns each
// replica's outputs, which Reduce and Gather treat as they treat Run's.
//
// A step that fails returns an error and applies nothing: a *ReplicaError
// naming the lowest failed replica when a RunStep returned an error or
// panicked (or, with WithCheckNumerics, an output or gradient was not
// finite), an error wrapping ErrUsage for a malformed step or argument or a
// gradient of the wrong length, an update's Check error as is, and
// safepoint.ErrInterrupted on an interrupt (RunExternal is a safe point). It
// panics with ErrClosed after Close.
func (s *Mirrored) RunExternal(step *ExternalStep, args ...any) (PerReplica, error) {
	s.checkOpen()
	if err := s.startExternal(); err != nil {
		return PerReplica{}, err
	}
	if CurrentReplicaContext() != nil {
		return PerReplica{}, usageError("RunExternal: called from a step function while it is traced; call it from the training loop")
	}
	if err := s.checkExternal(step); err != nil {
		return PerReplica{}, err
	}
	in, err := s.stepInputs(args)
	if err != nil {
		return PerReplica{}, err
	}

	s.runMu.Lock()
	defer s.runMu.Unlock()
	s.checkOpen()
	plan := unsplit(step.Updates, nil)
	if err := plan.check(); err != nil {
		return PerReplica{}, err
	}
	var count float64
	if in.batch != nil {
		count = float64(in.batch.count)
	}
	n := len(step.Replicas)
	outs := make([][]data.Tensor, n)
	// An external step is long (a gorgonia MLP step takes milliseconds), so
	// the replicas keep their threads (see replicaLoop.pin).
	errs := s.onReplicas(true, func(r int) error {
		ein := ExternalInput{Replica: s.rank*len(s.devices) + r, Args: in.args[r], GlobalCount: count}
		if in.batch != nil {
			ein.Mask = in.masks[r]
			ein.First = in.batch.before
			for q := range r {
				ein.First += in.batch.real[q]
			}
		}
		o, err := step.Replicas[r].RunStep(ein)
		if err != nil {
			return err
		}
		outs[r] = o
		if s.checkNumerics {
			return externalNumerics(step, r, o)
		}
		return nil
	})
	err = replicaFailure("run", errs)
	if err != nil {
		re := err.(*ReplicaError)
		re.Replica += s.rank * len(s.devices) // the global id
		if errors.Is(re.Err, ErrNonFinite) {
			re.Phase = "check"
		}
	}
	if err == nil {
		err = checkExternalOutputs(step, outs)
	}
	var grads [][][]Grad
	if err == nil {
		grads, err = externalGradients(step)
	}
	if err := s.agreeStep(err); err != nil {
		return PerReplica{}, err
	}
	plan.host = externalGrads{grads: grads, bufs32: make([][]float32, n), bufs64: make([][]float64, n)}
	if err := plan.applyUpdates(s); err != nil {
		return PerReplica{}, err
	}
	return externalOutputs(step, in, outs), nil
}

// startExternal is RunExternal's safe point: the interrupt check, agreed
// across workers as Run's is (an external step has no trace to compare).
func (s *Mirrored) startExternal() error {
	if !s.multi() {
		return safepoint.Err()
	}
	return s.agreeRun(nil, 0)
}

// checkExternal returns an error wrapping ErrUsage unless step has a replica
// for each of s's and well-formed updates of s's variables.
func (s *Mirrored) checkExternal(step *ExternalStep) error {
	if step == nil {
		return usageError("RunExternal: want an *ExternalStep, got nil")
	}
	if len(step.Replicas) != s.LocalReplicas() {
		return usageError("RunExternal: want %d replicas, one per replica of the strategy on this worker, got %d", s.LocalReplicas(), len(step.Replicas))
	}
	for r, rep := range step.Replicas {
		if rep == nil {
			return usageError("RunExternal: replica %d is nil", r)
		}
	}
	for _, u := range step.Updates {
		if u.Update == nil {
			return usageError("RunExternal: update %s: want an Update, got nil", u.Name)
		}
		if u.Grads != nil {
			return usageError("RunExternal: update %s: want Grads nil (an external step's gradients come from ExternalReplica.Gradient), got %d nodes", u.Name, len(u.Grads))
		}
		for _, v := range u.Vars {
			if err := s.checkVariable(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkExternalOutputs returns an error wrapping ErrUsage unless every
// replica returned as many outputs as the step names, each holding as many
// values as its shape says.
func checkExternalOutputs(step *ExternalStep, outs [][]data.Tensor) error {
	for r, o := range outs {
		if len(o) != len(outs[0]) {
			return usageError("RunExternal: replica %d returned %d outputs, replica 0 %d", r, len(o), len(outs[0]))
		}
		if step.Outputs != nil && len(o) != len(step.Outputs) {
			return usageError("RunExternal: replica %d returned %d outputs, want %d (%v)", r, len(o), len(step.Outputs), step.Outputs)
		}
		for k, t := range o {
			if t.Len() != len(t.Data) {
				return usageError("RunExternal: replica %d's output %d has shape %v but holds %d values", r, k, t.Shape, len(t.Data))
			}
		}
	}
	return nil
}

// externalGradients collects, for every update and variable, the replicas'
// gradient buffers ([update][variable][replica]), checking their dtype and
// length before anything is summed or applied.
func externalGradients(step *ExternalStep) ([][][]Grad, error) {
	grads := make([][][]Grad, len(step.Updates))
	for k, u := range step.Updates {
		grads[k] = make([][]Grad, len(u.Vars))
		for i, v := range u.Vars {
			per := make([]Grad, len(step.Replicas))
			for r, rep := range step.Replicas {
				g := rep.Gradient(v)
				got, ok := len(g.F32), g.F64 == nil
				if v.DType() == graph.Float64 {
					got, ok = len(g.F64), g.F32 == nil
				}
				if !ok || got != v.Len() {
					return nil, usageError("RunExternal: update %s: replica %d's gradient of %q: want %d %v values, got %d float32 and %d float64",
						u.Name, r, v.Name(), v.Len(), v.DType(), len(g.F32), len(g.F64))
				}
				g.Var = v
				per[r] = g
			}
			grads[k][i] = per
		}
	}
	return grads, nil
}

// externalGrads sums an external step's gradients, [update][variable][replica],
// over replicas, in replica order, into replica 0's buffer.
type externalGrads struct {
	grads  [][][]Grad
	bufs32 [][]float32 // scratch: the replicas' buffers of one gradient
	bufs64 [][]float64
}

func (e externalGrads) sum(k, i int, _ *graph.Variable) (Grad, error) {
	per := e.grads[k][i]
	for r, g := range per {
		e.bufs32[r], e.bufs64[r] = g.F32, g.F64
	}
	if per[0].F32 != nil {
		loops.AllReduceSum(e.bufs32)
	} else {
		loops.AllReduceSum(e.bufs64)
	}
	return per[0], nil
}

// externalNumerics returns an error wrapping ErrNonFinite for the first
// gradient of replica r, in update order, or the first output, that holds
// NaN or Inf.
func externalNumerics(step *ExternalStep, r int, outs []data.Tensor) error {
	rep := step.Replicas[r]
	for _, u := range step.Updates {
		for _, v := range u.Vars {
			g := rep.Gradient(v)
			i, x := nonFinite32(g.F32), 0.0
			if i >= 0 {
				x = float64(g.F32[i])
			} else if i = nonFinite64(g.F64); i >= 0 {
				x = g.F64[i]
			}
			if i >= 0 {
				return &wrapped{kind: ErrNonFinite, msg: fmt.Sprintf("gradient of %q holds %v at element %d", v.Name(), x, i)}
			}
		}
	}
	for k, o := range outs {
		if i := nonFinite64(o.Data); i >= 0 {
			name := fmt.Sprintf("step output %d", k)
			if k < len(step.Outputs) {
				name = fmt.Sprintf("step output %q", step.Outputs[k])
			}
			return &wrapped{kind: ErrNonFinite, msg: fmt.Sprintf("%s holds %v at element %d", name, o.Data[i], i)}
		}
	}
	return nil
}

// externalOutputs arranges the replicas' outputs ([replica][output]) as
// RunExternal returns them.
func externalOutputs(step *ExternalStep, in *stepInputs, outs [][]data.Tensor) PerReplica {
	if len(outs[0]) == 0 {
		return PerReplica{}
	}
	parts := make([]PerReplica, len(outs[0]))
	for k := range parts {
		vals := make([]data.Tensor, len(outs))
		for r := range outs {
			vals[r] = outs[r][k]
		}
		parts[k] = PerReplica{values: vals, batch: in.batch}
	}
	switch {
	case step.Outputs != nil:
		return PerReplica{parts: parts, names: append([]string(nil), step.Outputs...), batch: in.batch}
	case len(parts) == 1:
		return parts[0]
	}
	return PerReplica{parts: parts, batch: in.batch}
}

// ExternalShapes returns the shapes of the tensors each replica's RunStep
// would get for args, [replica][argument], or the error RunExternal would
// return for args: an engine whose graphs depend on the input shapes builds
// them from it before calling RunExternal.
func (s *Mirrored) ExternalShapes(args ...any) ([][][]int, error) {
	s.checkOpen()
	in, err := s.stepInputs(args)
	if err != nil {
		return nil, err
	}
	shapes := make([][][]int, len(in.args))
	for r, a := range in.args {
		shapes[r] = make([][]int, len(a))
		for k, t := range a {
			shapes[r][k] = slices.Clone(t.Shape)
		}
	}
	return shapes, nil
}
