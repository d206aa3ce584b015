package strategy

import (
	"fmt"
	"sync"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/safepoint"
)

// Cluster connects the worker processes of a multi-worker strategy, which
// run the same program (SPMD): every worker calls the same methods in the
// same order, and each call returns the same result on every worker. The
// strategy calls a Cluster from one goroutine at a time, though not always
// from the same one. An error is fatal for the cluster: the strategy returns
// it, and the workers must be started again.
type Cluster interface {
	// Rank returns this worker's index in [0, Size).
	Rank() int
	// Size returns the number of workers.
	Size() int
	// AllReduceF32 replaces buf, of the same length on every worker, with
	// the element-wise sum over workers: the same bits on every worker.
	AllReduceF32(buf []float32) error
	// AllReduceF64 is AllReduceF32 for float64.
	AllReduceF64(buf []float64) error
	// AllGather returns every worker's local slice, in rank order; the
	// lengths may differ between workers.
	AllGather(local []float64) ([][]float64, error)
	// Broadcast returns root's buf on every worker; the others' buf is
	// ignored.
	Broadcast(buf []byte, root int) ([]byte, error)
}

// multi reports whether s is one of several workers.
func (s *Mirrored) multi() bool { return s.size > 1 }

// agreeRun is Run's agreement across workers, one collective per Run: on a
// pending interrupt (any worker's stops all), on a failure before the step
// (this worker's error, or one naming the worker that failed), and on the
// step's program: sig is the signature of the trace this worker is about
// to run (trace.signature), and a worker whose cells built another model
// or another step fails here, named, before a collective could mix its
// buffers with the others'.
//
// A worker of several waits for this agreement to interrupt
// (safepoint.SetAgreed: its request is safepoint.Requested); once agreed
// the interrupt is confirmed, so the rest of the cell unwinds at its safe
// points as usual.
func (s *Mirrored) agreeRun(local error, sig uint64) error {
	mine := []float64{one(safepoint.Requested()), one(local != nil), float64(uint32(sig)), float64(sig >> 32)}
	all, err := s.cluster.AllGather(mine)
	if err != nil {
		return clusterError("agreeing on the step", err)
	}
	for _, a := range all {
		if len(a) != len(mine) {
			return clusterError("agreeing on the step", fmt.Errorf("a worker sent %d values, want %d", len(a), len(mine)))
		}
	}
	for _, a := range all {
		if a[0] != 0 {
			safepoint.Confirm()
			return safepoint.Err()
		}
	}
	for w, a := range all {
		if a[1] != 0 {
			if local != nil {
				return local
			}
			return &wrapped{kind: ErrReplica, msg: fmt.Sprintf("strategy: worker %d could not trace this step (its error is in its own output); nothing ran on any worker", w)}
		}
	}
	for w, a := range all {
		if a[2] != all[0][2] || a[3] != all[0][3] {
			return usageError("Run: worker %d traced another step than worker 0 (other variables, shapes, updates or outputs): the workers' cells built different models; build the model the same way on every worker (no map order, unseeded randomness or worker-dependent code) and restart the workers", w)
		}
	}
	return nil
}

// AgreeFailure is for engines that prepare a step before RunExternal (gorgoniamodel
// builds its graphs): every worker calls it at the same point with its own
// error or nil, and on every worker it returns that error, or, when only
// another worker failed, an error wrapping ErrReplica that names it, so no
// worker goes on into a collective the failed one will not reach. With one
// worker it returns err.
func (s *Mirrored) AgreeFailure(err error) error {
	if !s.multi() {
		return err
	}
	return s.agreeStep(err)
}

// agreeStep returns, on every worker, an error when the step failed on any
// worker: this worker's own error, or one naming the first worker that
// failed, so that no worker applies a step another one could not take.
func (s *Mirrored) agreeStep(local error) error {
	w, err := s.firstWorker("agreeing on the step", local != nil)
	return agreement{worker: w, err: err}.step(local)
}

// agreement is the outcome of the agreement on a step's failures: the
// lowest worker that failed, or -1, and the cluster's error.
type agreement struct {
	worker int
	err    error
}

// step returns the step's error given this worker's own, local, as
// agreeStep does.
func (a agreement) step(local error) error {
	if a.err != nil {
		return a.err
	}
	if local != nil || a.worker < 0 {
		return local
	}
	return &wrapped{kind: ErrReplica, msg: fmt.Sprintf("strategy: worker %d failed this step (its error is in its own output); nothing was applied on any worker", a.worker)}
}

// one is 1 for true and 0 for false, as flags travel in collectives.
func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// clusterError wraps a Cluster's error, which ends the multi-worker
// strategy's usefulness: the workers no longer agree where they are.
func clusterError(doing string, err error) error {
	return &wrapped{kind: ErrCluster, msg: fmt.Sprintf("strategy: %s across workers: %v; restart the workers", doing, err)}
}

// firstWorker returns, on every worker, the lowest worker whose flag is
// set, or -1 when none is (always this worker's own answer with one
// worker). Every worker must call it at the same point.
func (s *Mirrored) firstWorker(doing string, flag bool) (int, error) {
	if !s.multi() {
		if flag {
			return s.rank, nil
		}
		return -1, nil
	}
	all, err := s.cluster.AllGather([]float64{one(flag)})
	if err != nil {
		return -1, clusterError(doing, err)
	}
	for w, a := range all {
		if len(a) == 1 && a[0] != 0 {
			return w, nil
		}
	}
	return -1, nil
}

// processCluster is the cluster this process's multi-worker strategies
// join: set once by the worker process that is one of several (gotrain
// worker, when the kernel runs %workers), before any cell runs.
var processCluster struct {
	sync.Mutex
	c Cluster
}

// UseCluster makes c the cluster NewMultiWorkerMirrored strategies of this
// process join. gotrain worker calls it when the kernel starts several
// workers; tests may call it too. UseCluster(nil) makes later strategies
// single-worker again.
func UseCluster(c Cluster) {
	processCluster.Lock()
	defer processCluster.Unlock()
	processCluster.c = c
}

// NewMultiWorkerMirrored returns a strategy across every worker of the
// process's cluster (UseCluster: the workers %workers started), each with
// the replicas opts ask for (default: one per core), like TensorFlow's
// MultiWorkerMirroredStrategy; NumReplicasInSync counts them all. In a
// process that is not one of several workers it is NewMirrored, so a
// notebook runs unchanged on one process or on N.
func NewMultiWorkerMirrored(opts ...Option) *Mirrored {
	processCluster.Lock()
	c := processCluster.c
	processCluster.Unlock()
	return NewMirrored(append([]Option{WithCluster(c)}, opts...)...)
}

// OwnerOf returns the open strategy v was created under, or nil: package nn
// asks it where a checkpoint's variables live.
func OwnerOf(v *graph.Variable) *Mirrored { return live.owner(v) }

// BroadcastFromChief returns worker 0's b on every worker (b itself with
// one worker): a checkpoint's bytes read by worker 0, a save's outcome.
// Every worker must call it at the same point.
func (s *Mirrored) BroadcastFromChief(b []byte) ([]byte, error) {
	if !s.multi() {
		return b, nil
	}
	out, err := s.cluster.Broadcast(b, 0)
	if err != nil {
		return nil, clusterError("broadcasting from worker 0", err)
	}
	return out, nil
}
