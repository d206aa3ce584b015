package strategy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
)

// testHookRun is set by tests to fail a replica's program.
var testHookRun func(replica int) error

// begin readies tr for a step on in, on CPU or GPU replicas: the global
// count, the updates' checks and the split updates' Begin, the in-step
// collectives.
func (tr *trace) begin(in *stepInputs) error {
	tr.count[0] = 0
	if in.batch != nil {
		tr.count[0] = float64(in.batch.count)
	}
	if err := tr.plan.check(); err != nil {
		return err
	}
	if err := tr.plan.begin(); err != nil {
		return err
	}
	tr.coll.reset()
	return nil
}

// execute runs one traced step on every replica and applies the updates.
// Each replica runs its program, copies its outputs, waits at the barrier
// for the others and then sums and applies its parts of the split updates;
// the other updates are applied after the replicas, on this goroutine. On
// several workers the replicas meet twice (acrossParts): after summing
// their parts over the local replicas, and the last one to arrive agrees on
// failures with the other workers and sums the split gradients across them
// before any part applies.
func (s *Mirrored) execute(tr *trace, in *stepInputs) (PerReplica, error) {
	if tr.gpu != nil {
		return s.executeGPU(tr, in)
	}
	if err := tr.begin(in); err != nil {
		return PerReplica{}, err
	}
	tr.barrier.reset()
	across := tr.plan.across != nil
	if across {
		tr.acrossBarrier.reset()
		tr.agreed = agreement{worker: -1}
	}
	vals := tr.newOutputs()
	// A step with updates to share is long enough to pin the replicas'
	// threads (splitMin).
	errs := s.onReplicas(len(tr.plan.split) > 0, func(r int) error {
		err := tr.runReplica(r, in, vals)
		if err == nil && tr.checks != nil {
			err = tr.checkNumerics(r, vals)
		}
		if len(tr.plan.split) == 0 {
			return err
		}
		ok := tr.barrier.wait(err != nil)
		if across {
			ok = tr.acrossParts(s, r, ok)
		}
		if err != nil || !ok {
			return err // nothing is applied
		}
		return tr.applyParts(r)
	})
	for r, err := range errs {
		var ae applyError
		if errors.As(err, &ae) {
			return PerReplica{}, &ReplicaError{Replica: r, Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", ae.err)}
		}
	}
	err := s.runFailure(errs, in)
	if across {
		err = tr.agreed.step(err)
	} else {
		err = s.agreeStep(err)
	}
	if err != nil {
		return PerReplica{}, err
	}
	if err := tr.plan.applyUpdates(s); err != nil {
		return PerReplica{}, err
	}
	return tr.outputs(in, vals), nil
}

// runFailure is the step's error from its replicas' errors (nil for a
// replica that succeeded), or nil: the lowest failed replica, by its
// global id, a label error naming the example of the global batch.
func (s *Mirrored) runFailure(errs []error, in *stepInputs) error {
	if in.batch != nil {
		for r, err := range errs {
			if err != nil { // labelExample allocates
				errs[r] = labelExample(err, r, in.batch)
			}
		}
	}
	err := replicaFailure("run", rootCauses(errs))
	var re *ReplicaError
	if errors.As(err, &re) {
		re.Replica += s.rank * len(s.devices) // the global id
		if errors.Is(re.Err, ErrNonFinite) {
			re.Phase = "check"
		}
	}
	return err
}

// labelExample rewrites a label error of replica r's program, which counts
// rows in the replica's shard, to name the example of the global batch, the
// row a user can find in the dataset, every worker's rows
// counted. Other errors pass as is.
func labelExample(err error, r int, b *batchInfo) error {
	var le *graph.LabelError
	if !errors.As(err, &le) || le.Row >= b.real[r] {
		return err
	}
	global := b.before + le.Row
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
