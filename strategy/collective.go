package strategy

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/internal/loops"
)

// errAborted is what a replica waiting in a collective panics with when
// another replica failed: the reduction can never complete, and the step is
// discarded on every replica.
var errAborted = errors.New("strategy: all-reduce abandoned: another replica failed")

// collective is one trace's cross-replica reduction point: every AllReduce
// node of every replica's program calls it in the middle of Run (through a
// replicaCollective), the k-th call of each replica being the k-th
// reduction. Programs of one trace are compiled from graphs built alike, so
// they reach their collectives in the same order (trace checks it).
//
// The last replica to arrive sums every buffer in replica order
// (loops.AllReduceSum), so all replicas get the same bits whatever the
// arrival order, and wakes the others. On several workers it then sums the
// local sum across workers (see across) before waking them. A replica that
// arrives early spins before it sleeps (see wait.go). Safe for concurrent
// use.
type collective struct {
	n       int           // immutable
	workers workerSet     // set once by checkCollectives, before the first step
	woken   atomic.Uint64 // wake-ups (wakeLocked), which a spinning waiter watches without the lock
	mu      struct {
		sync.Mutex
		cond    *sync.Cond
		arrived int         // replicas waiting in the current reduction
		gen     uint64      // reductions completed; waiters wait for it to move
		aborted bool        // a replica failed this step; every call panics
		bufs32  [][]float32 // per replica, the buffer of the current reduction
		bufs64  [][]float64
		cross   crossState // the step's reductions across workers
		spin    bool       // waiters spin before sleeping (spinning); set by reset
	}
}

func newCollective(n int) *collective {
	c := &collective{n: n}
	c.mu.cond = sync.NewCond(&c.mu)
	c.mu.bufs32 = make([][]float32, n)
	c.mu.bufs64 = make([][]float64, n)
	return c
}

// reset readies the collective for a step.
func (c *collective) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.spin = spinning(c.n)
	c.mu.aborted = false
	c.mu.arrived = 0
	c.mu.cross.reset()
	clear(c.mu.bufs32)
	clear(c.mu.bufs64)
}

// abort wakes every waiting replica, which then panics with errAborted; so
// does every later call until reset. A failed replica calls it so no other
// replica waits forever for it. On several workers it also releases the
// other workers from the reduction they wait in for this one (release).
func (c *collective) abort() {
	c.mu.Lock()
	c.mu.aborted = true
	c.wakeLocked()
	k, ok := c.releaseLocked()
	c.mu.Unlock()
	if ok {
		c.workers.release(k)
	}
}

// arriveLocked registers replica r's arrival and, for the last arrival,
// runs reduce; the others wait until it has. It panics with errAborted if
// the step is abandoned first.
func (c *collective) arriveLocked(reduce func()) {
	if c.mu.aborted {
		panic(c.abortErrLocked())
	}
	c.mu.arrived++
	if c.mu.arrived == c.n {
		reduce()
		c.mu.arrived = 0
		c.mu.gen++
		c.wakeLocked()
		return
	}
	gen := c.mu.gen
	if c.mu.spin {
		seen := c.woken.Load()
		c.mu.Unlock()
		spinUntil(func() bool { return c.woken.Load() != seen })
		c.mu.Lock()
	}
	for gen == c.mu.gen && !c.mu.aborted {
		c.mu.cond.Wait()
	}
	if gen == c.mu.gen {
		panic(c.abortErrLocked())
	}
}

// wakeLocked wakes every replica waiting in the collective, sleeping or
// spinning, after the current reduction ended or the step was abandoned.
func (c *collective) wakeLocked() {
	c.woken.Add(1)
	c.mu.cond.Broadcast()
}

// replicaCollective is the graph.Collective of one replica.
type replicaCollective struct {
	c *collective
	r int
}

func (rc replicaCollective) AllReduceF32(buf []float32) {
	c := rc.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.bufs32[rc.r] = buf
	c.arriveLocked(func() {
		loops.AllReduceSum(c.mu.bufs32)
		c.acrossLocked(c.mu.bufs32, nil)
	})
}

func (rc replicaCollective) AllReduceF64(buf []float64) {
	c := rc.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.bufs64[rc.r] = buf
	c.arriveLocked(func() {
		loops.AllReduceSum(c.mu.bufs64)
		c.acrossLocked(nil, c.mu.bufs64)
	})
}

// rootCauses keeps the errors of replicas that failed on their own: a
// replica that stopped only because another failed (errAborted) is not the
// cause, unless every failure is of that kind.
func rootCauses(errs []error) []error {
	own := false
	for _, err := range errs {
		if err != nil && !errors.Is(err, errAborted) {
			own = true
		}
	}
	if !own {
		return errs
	}
	out := make([]error, len(errs))
	for r, err := range errs {
		if !errors.Is(err, errAborted) {
			out[r] = err
		}
	}
	return out
}

// checkCollectives checks that every replica's program runs the same
// collectives (count and shapes), so their reductions line up.
func (tr *trace) checkCollectives() error {
	c0 := tr.replicas[0].prog.Collectives()
	for r, rt := range tr.replicas[1:] {
		c := rt.prog.Collectives()
		if len(c) != len(c0) {
			return &ReplicaError{Replica: r + 1, Phase: "trace", Err: fmt.Errorf(
				"step runs %d all-reductions (forward and backward), replica 0 runs %d; build the same graph on every replica", len(c), len(c0))}
		}
		for k := range c {
			if a, b := c[k].Shape(), c0[k].Shape(); fmt.Sprint(a) != fmt.Sprint(b) {
				return &ReplicaError{Replica: r + 1, Phase: "trace", Err: fmt.Errorf(
					"all-reduction %d (%s) of shape %v, replica 0 reduces %v", k, c[k].Name(), a, b)}
			}
		}
	}
	tr.coll.joinWorkers(tr.replicas[0].ctx.s, c0)
	return nil
}
