package strategy

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// splitPart is one variable's range [lo, hi) that one replica updates.
type splitPart struct {
	u, i   int         // update and variable index
	sp     Split       // update u
	lo, hi int         // elements
	g32    [][]float32 // every replica's gradient buffer of the variable
	g64    [][]float64
	// prod holds every replica's gradient node when the gradient is a
	// matrix product deferred out of the programs (graph.Program.Defer):
	// the replica computes its rows of the sum from all the replicas'
	// operands into its own gradient buffer, and [lo, hi) is whole rows
	// of cols elements.
	prod []*graph.Node
	cols int
}

// splitAlone is the length below which a variable is not cut: one replica
// updates all of it (a bias), the least loaded replica first.
const splitAlone = 2 * SplitBlock

// splitMin is the fewest elements worth sharing: below it (the quick start's
// 10-16-2 model has 210) the barrier costs more than the update, and a step of that
// model took 38-75 µs shared against 21.5 µs applied by the caller.
const splitMin = 1 << 16

// planSplit decides how the replicas share the updates of tr (its replicas
// and programs built), whose gradients are in its CPU programs' buffers
// (programGrads). An update is split when it is a Split and shares
// no variable and no gradient node with another update: a variable updated
// twice needs the updates' order, and a gradient buffer summed twice would
// be summed into itself. If the split updates have fewer than splitMin
// elements in all, none is split. With deferProducts, the parts whose
// gradient is a deferrable product leave it to the update. The plan is the
// same on every worker of a multi-worker strategy (multi), whatever their
// replicas, since the workers' traces agree: they then sum the split
// gradients across workers in one order (updatePlan.across), and a product
// cannot be deferred there, for it must be whole before that sum.
func planSplit(tr *trace, deferProducts, multi bool) updatePlan {
	n := len(tr.replicas)
	ups := tr.replicas[0].ctx.updates
	shared := sharedUpdates(ups)
	plan := newPlan(ups, programGrads{tr})
	plan.parts = make([][]splitPart, n)
	load := make([]int, n) // elements given to each replica so far
	var deferred [][]*graph.Node
	for k, u := range ups {
		sp, ok := u.Update.(Split)
		if !ok || shared[k] {
			plan.rest = append(plan.rest, k)
			continue
		}
		plan.shareAt(k, sp)
		for i, v := range u.Vars {
			p := splitPart{u: k, i: i, sp: sp, g32: make([][]float32, n), g64: make([][]float64, n)}
			for r, rt := range tr.replicas {
				gn := rt.ctx.updates[k].Grads[i]
				p.g32[r], p.g64[r] = rt.prog.F32(gn), rt.prog.F64(gn)
			}
			if p.g32[0] == nil {
				p.g32 = nil
			} else {
				p.g64 = nil
			}
			var prod []*graph.Node
			if deferProducts {
				prod = deferrable(tr, k, i)
			}
			if prod != nil {
				p.prod, p.cols = prod, prod[0].Shape()[1]
				deferred = append(deferred, prod)
			}
			size := v.Len()
			if size < splitAlone {
				r := 0
				for q := range load {
					if load[q] < load[r] {
						r = q
					}
				}
				p.lo, p.hi = 0, size
				plan.parts[r] = append(plan.parts[r], p)
				load[r] += size
				continue
			}
			// Cuts at multiples of 64 elements, so two replicas never
			// write one cache line. A deferred product's are at whole
			// rows, which share a line only when a row is not a whole
			// number of 64-byte lines: false sharing at one line, not a
			// race.
			for r := range n {
				p.lo, p.hi = (size*r/n)&^63, (size*(r+1)/n)&^63
				if p.prod != nil {
					rows := size / p.cols
					p.lo, p.hi = rows*r/n*p.cols, rows*(r+1)/n*p.cols
				}
				if r == n-1 {
					p.hi = size
				}
				plan.parts[r] = append(plan.parts[r], p)
				load[r] += p.hi - p.lo
			}
		}
	}
	total := 0
	for _, l := range load {
		total += l
	}
	if total < splitMin {
		return unsplit(ups, plan.host)
	}
	for _, prod := range deferred {
		for r, n := range prod {
			tr.replicas[r].prog.Defer(n)
		}
	}
	if multi {
		plan.across = acrossGrads(tr, plan.split)
	}
	return plan
}

// acrossGrads returns replica 0's gradient buffer of every variable of the
// updates split, in order (updatePlan.across).
func acrossGrads(tr *trace, split []int) []Grad {
	var grads []Grad
	rt := tr.replicas[0]
	for _, k := range split {
		u := rt.ctx.updates[k]
		for i, v := range u.Vars {
			grads = append(grads, Grad{Var: v, F32: rt.prog.F32(u.Grads[i]), F64: rt.prog.F64(u.Grads[i])})
		}
	}
	return grads
}

// acrossParts is where the replicas of a worker of several meet after the
// barrier, ok if none of them failed: each sums its parts of the split
// gradients over the local replicas into replica 0's buffers
// (updatePlan.across), then the last to arrive, alone and so from one
// goroutine as a Cluster wants, agrees with the other workers on failures
// and, when none failed, sums those buffers across workers (fused, as
// applyHost does). It reports on every replica whether the parts may
// apply; nothing is applied on any worker before every worker knows that
// every worker succeeded. The agreement's outcome is in tr.agreed.
func (tr *trace) acrossParts(s *Mirrored, r int, ok bool) bool {
	if ok {
		tr.sumParts(r)
	}
	return tr.acrossBarrier.waitThen(!ok, func(ok bool) (applies bool) {
		defer func() {
			if v := recover(); v != nil {
				tr.agreed.err = &ReplicaError{Replica: s.rank * len(s.devices), Phase: "apply", Err: fmt.Errorf("summing the optimizer update's gradients across workers: %w", panicError(v))}
				applies = false
			}
		}()
		tr.agreed.worker, tr.agreed.err = s.firstWorker("agreeing on the step", !ok)
		if tr.agreed.err != nil || tr.agreed.worker >= 0 {
			return false
		}
		tr.agreed.err = s.sumAcrossFused(tr.plan.across)
		return tr.agreed.err == nil
	})
}

// sumParts sums replica r's parts of the split gradients over the local
// replicas, in replica order as applyParts does, into replica 0's buffers.
func (tr *trace) sumParts(r int) {
	for _, p := range tr.plan.parts[r] {
		if p.g32 != nil {
			g := p.g32[0][p.lo:p.hi]
			for _, b := range p.g32[1:] {
				loops.AddTo(g, g, b[p.lo:p.hi])
			}
		} else {
			g := p.g64[0][p.lo:p.hi]
			for _, b := range p.g64[1:] {
				loops.AddTo(g, g, b[p.lo:p.hi])
			}
		}
	}
}

// deferrable returns every replica's gradient node of variable i of update
// k if the programs can leave that product to the update (a dense layer's
// weight gradient, xᵀ·dz): each replica's node is a product its program
// alone reads, and no replica returns it from the step. Otherwise nil.
//
// A replica's share of the batch is usually smaller than the layer, so
// reading another replica's x and dz moves less memory than reading its
// gradient: a 784×512 layer at 128 rows a replica reads 0.6 MB of operands
// instead of 1.6 MB of products, and no replica writes a gradient that a sum
// reads back.
func deferrable(tr *trace, k, i int) []*graph.Node {
	prod := make([]*graph.Node, len(tr.replicas))
	for r, rt := range tr.replicas {
		n := rt.ctx.updates[k].Grads[i]
		if len(n.Shape()) != 2 || !rt.prog.Deferrable(n) || slices.Contains(rt.outputs, n) {
			return nil
		}
		prod[r] = n
	}
	return prod
}

// applyParts sums replica r's parts of the split updates' gradients over
// replicas, in replica order as loops.AllReduceSum does, and applies them,
// a block at a time so the sum is still in cache when Part reads it. A
// deferred product is summed whole first (sumProduct). On several workers
// the parts are summed already (acrossParts) and only apply. A panic
// becomes an applyError.
func (tr *trace) applyParts(r int) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = applyError{panicError(v)}
		}
	}()
	ups := tr.replicas[0].ctx.updates
	summed := tr.plan.across != nil
	for _, p := range tr.plan.parts[r] {
		g := Grad{Var: ups[p.u].Vars[p.i]}
		if p.prod != nil {
			tr.sumProduct(r, p)
		}
		for lo := p.lo; lo < p.hi; lo += SplitBlock {
			hi := min(lo+SplitBlock, p.hi)
			switch {
			case summed && p.g32 != nil:
				g.F32 = p.g32[0][lo:hi]
			case summed:
				g.F64 = p.g64[0][lo:hi]
			case p.prod != nil && p.g32 != nil:
				g.F32 = p.g32[r][lo:hi]
			case p.prod != nil:
				g.F64 = p.g64[r][lo:hi]
			case p.g32 != nil:
				g.F32 = p.g32[0][lo:hi]
				for _, b := range p.g32[1:] {
					loops.AddTo(g.F32, g.F32, b[lo:hi])
				}
			default:
				g.F64 = p.g64[0][lo:hi]
				for _, b := range p.g64[1:] {
					loops.AddTo(g.F64, g.F64, b[lo:hi])
				}
			}
			p.sp.Part(p.i, lo, g)
		}
	}
	return nil
}

// applyError is a failure of an update applied on a replica's goroutine, to
// tell it from a failure of the replica's program.
type applyError struct{ err error }

func (e applyError) Error() string { return e.err.Error() }
func (e applyError) Unwrap() error { return e.err }

// sumProduct computes replica r's rows of a deferred gradient, summed over
// the replicas in replica order, into r's own gradient buffer.
func (tr *trace) sumProduct(r int, p splitPart) {
	rowLo, rowHi := p.lo/p.cols, p.hi/p.cols
	for q, rt := range tr.replicas {
		if p.g32 != nil {
			rt.prog.ProductRowsF32(p.prod[q], rowLo, rowHi, p.g32[r][p.lo:p.hi], q > 0)
		} else {
			rt.prog.ProductRowsF64(p.prod[q], rowLo, rowHi, p.g64[r][p.lo:p.hi], q > 0)
		}
	}
}

// stepBarrier is where the replicas meet after running their programs and
// before applying the split updates: no replica may write a variable that
// another is still reading, and none may write at all when one failed. A
// replica that arrives early spins before it sleeps (see wait.go).
type stepBarrier struct {
	n       int
	spin    bool // spin before sleeping (spinning)
	mu      sync.Mutex
	cond    sync.Cond
	arrived int
	failed  bool
	open    atomic.Bool
}

func newStepBarrier(n int) *stepBarrier {
	b := &stepBarrier{n: n}
	b.cond.L = &b.mu
	return b
}

// reset readies the barrier for a step; no replica may be waiting in it.
func (b *stepBarrier) reset() {
	b.arrived, b.failed = 0, false
	b.open.Store(false)
	b.spin = spinning(b.n)
}

// wait marks the calling replica arrived, failed or not, waits for every
// replica and reports whether all of them succeeded.
func (b *stepBarrier) wait(failed bool) bool { return b.waitThen(failed, nil) }

// waitThen is wait, except that the last replica to arrive calls last, when
// not nil, with whether every replica succeeded, before it lets the others
// go, and every replica reports what last returned. last runs without the
// barrier's lock (it may do I/O) and must not panic.
func (b *stepBarrier) waitThen(failed bool, last func(ok bool) bool) bool {
	b.mu.Lock()
	b.failed = b.failed || failed
	b.arrived++
	if b.arrived == b.n {
		ok := !b.failed
		if last != nil {
			// Every other replica waits for open, so none touches failed
			// until it is set.
			b.mu.Unlock()
			ok = last(ok)
			b.mu.Lock()
			b.failed = !ok
		}
		b.open.Store(true)
		b.mu.Unlock()
		b.cond.Broadcast()
		return ok
	}
	b.mu.Unlock()
	// failed was written before open under the lock, and nobody writes
	// it again before reset.
	if b.spin && spinUntil(b.open.Load) {
		return !b.failed
	}
	b.mu.Lock()
	for !b.open.Load() {
		b.cond.Wait()
	}
	ok := !b.failed
	b.mu.Unlock()
	return ok
}
