package strategy

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/safepoint"
)

// replicaLoop is a replica's persistent goroutine: it runs the jobs Run hands it,
// one at a time, until Close closes jobs.
type replicaLoop struct {
	jobs    chan func()
	running atomic.Bool // a job is executing, for Close's audit
	pinned  bool        // locked to its OS thread; only its goroutine uses it
	gpus    *graph.GPUs // the replicas' GPUs, nil on CPUs; immutable
	r       int         // the replica, its index in gpus; immutable
	bound   bool        // the GPU's context is current on the loop's thread; only its goroutine uses it
}

// bind keeps a GPU replica's goroutine on its OS thread with its device's
// context current there, from its first job on: the thread then finds the
// context current at every call into the device. A CUDA context is current
// per OS thread, so a goroutine that moved between threads would have to
// bind it again before each call.
func (w *replicaLoop) bind() error {
	w.pin(true)
	if w.bound {
		return nil
	}
	if err := w.gpus.Bind(w.r); err != nil {
		return err
	}
	w.bound = true
	return nil
}

func (w *replicaLoop) loop(wg *sync.WaitGroup) {
	defer wg.Done()
	for job := range w.jobs {
		w.running.Store(true)
		job()
		w.running.Store(false)
	}
	w.pin(false)
}

// pin locks the loop's goroutine to its OS thread, or unlocks it, until
// the next call; it must run on the loop's goroutine.
//
// A replica whose step is long keeps one OS thread, as a device keeps its
// thread in TensorFlow. Unlocked, the replicas' goroutines change threads at
// every step, and in about half of the steps of a 2-replica MLP on two cores
// one replica ran 1.3 to 1.8 ms longer than the other, as if the two had
// shared a core for that long (the step median went from 5.4 to 7.2 ms). A
// short step stays unlocked: waking a locked goroutine hands the processor
// to its own thread, and the quick start's 10-16-2 step went from 21 to 56-68 µs.
func (w *replicaLoop) pin(on bool) {
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
// the goroutines keep their OS threads (see replicaLoop.pin); a GPU
// replica's always does (replicaLoop.bind).
//
// The jobs go out last replica first. A job handed to a sleeping loop
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
	errs := make([]error, len(s.loops))
	var wg sync.WaitGroup
	wg.Add(len(s.loops))
	for r := len(s.loops) - 1; r >= 0; r-- {
		w := s.loops[r]
		w.jobs <- func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[r] = panicError(v)
				}
			}()
			if w.gpus != nil {
				if err := w.bind(); err != nil {
					errs[r] = err
					return
				}
			} else {
				w.pin(pin)
			}
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
// reflection, only when Run traces (see the package doc), so it may be any
// closure.
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
	if !s.multi() {
		if err := safepoint.Err(); err != nil {
			return PerReplica{}, err
		}
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
	if s.multi() {
		// Every worker gets here once per Run, traced or not: they agree
		// on interrupts, on tracing failures and on what they traced.
		var sig uint64
		if err == nil {
			sig = tr.signature()
		}
		if err := s.agreeRun(err, sig); err != nil {
			return PerReplica{}, err
		}
	}
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
	n := s.LocalReplicas()
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
				in.batch = &batchInfo{rows: a.rows, real: slices.Clone(a.real), count: a.count, before: a.before}
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
			if len(a.Shape) > 0 && s.NumReplicasInSync() > 1 {
				return nil, undistributed(i, a, s.NumReplicasInSync())
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
		in.batch = &batchInfo{rows: rows, real: make([]int, n), count: rows * s.NumReplicasInSync(), before: rows * n * s.rank}
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
// pitfall of forgetting to distribute the dataset).
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
