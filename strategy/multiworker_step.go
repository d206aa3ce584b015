package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// workerSet is what a step's collective needs to reduce across the workers
// of a multi-worker strategy; the zero value is one worker.
type workerSet struct {
	cluster    Cluster // nil for one worker
	rank, size int
	lens       []int // the elements of each reduction of a step, in the order the programs run them
	f64        bool  // the reductions are float64 (a Float64 strategy)
}

// crossState is a step's progress through its reductions across workers;
// guarded by the collective's mu.
type crossState struct {
	done int   // reductions this worker completed across workers this step
	over bool  // every worker knows the step failed, or the cluster did: send nothing more
	err  error // what released replicas panic with after another worker failed; nil: errAborted

	scratch32 []float32 // the local sum and the workers' failure flags; reused between steps
	scratch64 []float64
}

func (x *crossState) reset() {
	x.done, x.over, x.err = 0, false, nil
}

// joinWorkers makes the collective of a trace whose replicas run the
// reductions colls (replica 0's, every replica's alike) sum across the
// workers of s too. It runs once, when the trace is compiled, before any
// replica runs.
func (c *collective) joinWorkers(s *Mirrored, colls []*graph.Node) {
	if !s.multi() {
		return
	}
	w := workerSet{cluster: s.cluster, rank: s.rank, size: s.size, f64: s.dtype == graph.Float64}
	for _, n := range colls {
		w.lens = append(w.lens, n.Len())
	}
	c.workers = w
}

// acrossLocked sums bufs, which hold the local replicas' sum, across workers,
// in place; the last local replica to arrive calls it. Each worker sends its
// sum followed by one failure flag per worker, its own 0: a worker whose
// replica failed before this reduction sends its flag set instead (release),
// and the others then abandon the step rather than wait for a reduction it
// will never reach. A cluster error, or another worker's failure, panics
// here, after waking the other local replicas, which panic too: each is a
// step error of this worker, never a hang.
func (c *collective) acrossLocked(bufs32 [][]float32, bufs64 [][]float64) {
	w := c.workers
	if w.cluster == nil {
		return
	}
	x := &c.mu.cross
	var err error
	var failed int
	if bufs32 != nil {
		failed, err = acrossLocked(c, bufs32, &x.scratch32, w.cluster.AllReduceF32)
	} else {
		failed, err = acrossLocked(c, bufs64, &x.scratch64, w.cluster.AllReduceF64)
	}
	x.done++
	switch {
	case err != nil:
		x.over = true
		c.mu.aborted = true
		c.wakeLocked()
		panic(clusterError(fmt.Sprintf("all-reducing inside the step (reduction %d of %d)", x.done, len(w.lens)), err))
	case failed >= 0:
		x.over = true
		x.err = &abandonedError{worker: failed}
		c.mu.aborted = true
		c.wakeLocked()
		panic(x.err)
	}
}

// acrossLocked is the typed part of collective.acrossLocked: it returns the
// lowest worker that flagged a failure, or -1, and the cluster's error; the
// sum is copied into bufs only when both are clear.
func acrossLocked[T loops.Float](c *collective, bufs [][]T, scratch *[]T, allReduce func([]T) error) (int, error) {
	n, size := len(bufs[0]), c.workers.size
	if cap(*scratch) < n+size {
		*scratch = make([]T, n+size)
	}
	buf := (*scratch)[:n+size]
	copy(buf, bufs[0])
	clear(buf[n:])
	// No I/O under mu. Every local replica has arrived and waits for gen to
	// move, so none reads or writes the collective until Lock returns.
	c.mu.Unlock()
	err := allReduce(buf)
	c.mu.Lock()
	if err != nil {
		return -1, err
	}
	for wk, f := range buf[n:] {
		if f != 0 {
			return wk, nil
		}
	}
	for _, b := range bufs {
		copy(b, buf[:n])
	}
	return -1, nil
}

// releaseLocked reports whether this worker, one of whose replicas just
// failed, must release the other workers, and from which reduction: the
// one it stopped short of, unless the step has no reduction left or the
// other workers already know.
func (c *collective) releaseLocked() (int, bool) {
	x := &c.mu.cross
	if c.workers.cluster == nil || x.over || x.done >= len(c.workers.lens) {
		return 0, false
	}
	x.over = true
	return x.done, true
}

// release takes part in reduction k with a zero buffer and this worker's
// failure flag set, so the workers waiting in it abandon the step. Its
// error is dropped: the step has failed already, and the agreement on it
// that follows (agreeStep) reports a cluster that no longer works.
func (w workerSet) release(k int) {
	n := w.lens[k]
	if w.f64 {
		buf := make([]float64, n+w.size)
		buf[n+w.rank] = 1
		_ = w.cluster.AllReduceF64(buf)
		return
	}
	buf := make([]float32, n+w.size)
	buf[n+w.rank] = 1
	_ = w.cluster.AllReduceF32(buf)
}

// abortErrLocked is what a replica released from a collective panics with.
func (c *collective) abortErrLocked() error {
	if err := c.mu.cross.err; err != nil {
		return err
	}
	return errAborted
}

// abandonedError is the error of a replica whose step stopped because
// another worker's replica failed. It matches errAborted, so that a
// replica of this worker that failed on its own is still the cause.
type abandonedError struct{ worker int }

func (e *abandonedError) Error() string {
	return fmt.Sprintf("strategy: all-reduce abandoned: worker %d failed this step (its error is in its own output); nothing was applied on any worker", e.worker)
}

func (e *abandonedError) Is(target error) bool { return target == errAborted }
