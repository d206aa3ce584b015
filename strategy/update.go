package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// updatePlan is how a step applies its updates, chosen once, when the step
// is traced (or, for RunExternal, when the step is handed over), from the
// interfaces each update implements: which check themselves before the step
// (Checker), which are applied in parts (Split: by the replicas on CPUs,
// planSplit; a DeviceSplit on the devices, planGPU), which are applied whole
// by Apply on the host, and where those find their summed gradients.
type updatePlan struct {
	ups    []Registration // replica 0's, in registration order
	checks []Checker      // the updates that are Checkers, in order
	split  []int          // indices of the updates applied in parts
	splits []Split        // the updates of split, aligned with it
	rest   []int          // indices of the updates applied whole, by Apply
	host   hostGrads      // where rest's gradients are summed from
	grads  []Grad         // scratch handed to Apply, kept across steps

	// The replicas' parts of the CPU split updates (planSplit).
	parts [][]splitPart // [replica]
	// across is, on several workers, every split variable's gradient in
	// replica 0's buffer, in the order of split and of each update's Vars:
	// the replicas sum their parts into it, it is summed across workers,
	// and the parts apply from it (acrossParts). Nil with one worker.
	across []Grad
}

// newPlan returns the plan of ups with their checks and gradient source and
// no update placed yet: the planners then add each update to split
// (shareAt) or rest.
func newPlan(ups []Registration, host hostGrads) updatePlan {
	plan := updatePlan{ups: ups, host: host}
	for _, u := range ups {
		if c, ok := u.Update.(Checker); ok {
			plan.checks = append(plan.checks, c)
		}
	}
	return plan
}

// unsplit is the plan that applies every update of ups whole.
func unsplit(ups []Registration, host hostGrads) updatePlan {
	plan := newPlan(ups, host)
	plan.rest = make([]int, len(ups))
	for k := range plan.rest {
		plan.rest[k] = k
	}
	return plan
}

// shareAt places update k, sp, among those applied in parts.
func (p *updatePlan) shareAt(k int, sp Split) {
	p.split = append(p.split, k)
	p.splits = append(p.splits, sp)
}

// check calls every update's Check before the replicas start.
func (p *updatePlan) check() error {
	for _, c := range p.checks {
		if err := c.Check(); err != nil {
			return err
		}
	}
	return nil
}

// begin calls Begin of every split update, before the replicas start.
func (p *updatePlan) begin() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("preparing the optimizer update: %w", panicError(v))}
		}
	}()
	for _, sp := range p.splits {
		sp.Begin()
	}
	return nil
}

// apply is the one way a step's updates are finished, once every replica
// succeeded and the parts (on the replicas or the devices) are applied: it
// ends the split updates (End) and applies the others (applyHost), calling
// after, when not nil, after each Apply.
func (p *updatePlan) apply(s *Mirrored, after func()) error {
	for _, sp := range p.splits {
		sp.End()
	}
	return p.applyHost(s, after)
}

// applyUpdates is apply for CPU replicas and external steps, whose panic
// becomes the error of replica 0's apply phase.
func (p *updatePlan) applyUpdates(s *Mirrored) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", panicError(v))}
		}
	}()
	return p.apply(s, nil)
}

// hostGrads is where the updates Apply runs find their gradients summed
// over this worker's replicas: the CPU programs' buffers (programGrads), a
// GPU step's copies (gpuStep) or an external engine's buffers
// (externalGrads). A plan's is chosen when the step is traced.
type hostGrads interface {
	// sum returns variable i of update k, v, with its gradient summed over
	// this worker's replicas in replica order, in a buffer the step owns.
	sum(k, i int, v *graph.Variable) (Grad, error)
}

// applyHost is the one place an update's Apply is called. For each update
// of rest, in order, it sums each gradient over this worker's replicas
// (p.host) and then across workers, an update's gradients fused
// (sumAcrossFused), calls Apply once with the sums, and then after, when not
// nil.
func (p *updatePlan) applyHost(s *Mirrored, after func()) error {
	for _, k := range p.rest {
		u := p.ups[k]
		gs := p.grads[:0]
		for i, v := range u.Vars {
			g, err := p.host.sum(k, i, v)
			if err != nil {
				return err
			}
			gs = append(gs, g)
		}
		p.grads = gs
		if err := s.sumAcrossFused(gs); err != nil {
			return err
		}
		u.Update.Apply(gs)
		if after != nil {
			after()
		}
	}
	return nil
}

// sharedUpdates reports, for each update of ups, whether it shares a
// variable or a gradient node with another: a variable updated twice needs
// the updates' order, and a gradient buffer summed twice would be summed
// into itself, so such an update is applied whole, by Apply.
func sharedUpdates(ups []Registration) []bool {
	vars := make(map[*graph.Variable]int)
	grads := make(map[*graph.Node]int)
	for _, u := range ups {
		for i, v := range u.Vars {
			vars[v]++
			grads[u.Grads[i]]++
		}
	}
	shared := make([]bool, len(ups))
	for k, u := range ups {
		for i, v := range u.Vars {
			shared[k] = shared[k] || vars[v] > 1 || grads[u.Grads[i]] > 1
		}
	}
	return shared
}

// programGrads sums a trace's gradients from its CPU programs' buffers,
// into replica 0's (loops.AllReduceSum).
type programGrads struct{ tr *trace }

func (p programGrads) sum(k, i int, v *graph.Variable) (Grad, error) {
	tr := p.tr
	for r, rt := range tr.replicas {
		gn := rt.ctx.updates[k].Grads[i]
		tr.bufs32[r] = rt.prog.F32(gn)
		tr.bufs64[r] = rt.prog.F64(gn)
	}
	g := Grad{Var: v}
	if tr.bufs32[0] != nil {
		loops.AllReduceSum(tr.bufs32)
		g.F32 = tr.bufs32[0]
	} else {
		loops.AllReduceSum(tr.bufs64)
		g.F64 = tr.bufs64[0]
	}
	return g, nil
}

// FusionBucket is the most bytes one all-reduction across workers carries
// (sumAcrossFused): 25 MiB, PyTorch DDP's bucket_cap_mb and Horovod's fusion
// threshold. One reduction of an update's gradients instead of one per
// variable saves each variable's latency (a round trip through every
// worker) and keeps the transfers long enough to reach the link's
// bandwidth; a cap keeps the buffer's memory bounded.
const FusionBucket = 25 << 20

// FusionAlone is the size from which a gradient is summed across workers
// alone, in place: 256 KiB reach the link's bandwidth without company, and
// copying them into a bucket and back would cost more than the reduction's
// latency saves (on two workers sharing memory, a copy of the MLP
// 784-512-512-10's two large gradients, 2.6 MB, costs about as much as the
// six reductions it replaces).
const FusionAlone = 256 << 10

// fusion is a strategy's buckets for summing gradients across workers, kept
// from one step to the next so that a step allocates none.
type fusion struct {
	f32 []float32
	f64 []float64
}

// sumAcrossFused adds every gradient of grads over workers, in place, after
// the local replicas' sums, with the bits of one all-reduction per gradient
// (a sum across workers is element by element): the gradients of one
// dtype shorter than FusionAlone bytes are copied, in order, one after the
// other into a bucket of at most FusionBucket bytes, each bucket is summed
// in one all-reduction, and the sums are copied back; each longer gradient
// is summed alone, in place, before the bucket it comes across. The buckets
// (s.fusion) are kept across steps; a step that needs more than the last one
// grows them. The caller holds runMu. Every worker must call it with the
// same gradients' lengths and dtypes in the same order.
func (s *Mirrored) sumAcrossFused(grads []Grad) error {
	if !s.multi() {
		return nil
	}
	f := &s.fusion
	if err := fuse(grads, &f.f32, FusionBucket/4, FusionAlone/4, func(g Grad) []float32 { return g.F32 }, s.cluster.AllReduceF32); err != nil {
		return err
	}
	return fuse(grads, &f.f64, FusionBucket/8, FusionAlone/8, func(g Grad) []float64 { return g.F64 }, s.cluster.AllReduceF64)
}

// fuse is sumAcrossFused for the gradients whose of returns a slice, with
// *bucket the buffer of at most limit elements it fills, and alone (at
// most limit) the length from which a gradient is summed in place, as it
// comes: the bucket fills with the shorter ones across it.
func fuse[T float32 | float64](grads []Grad, bucket *[]T, limit, alone int, of func(Grad) []T, allReduce func([]T) error) error {
	fused := func(g Grad) bool { x := of(g); return x != nil && len(x) < alone }
	need := 0
	for _, g := range grads {
		if fused(g) {
			need = min(limit, need+len(of(g)))
		}
	}
	if cap(*bucket) < need {
		*bucket = make([]T, need)
	}
	buf := (*bucket)[:cap(*bucket)]
	// The fused gradients of grads[from:i] are in buf[:n].
	from, n := 0, 0
	flush := func(to int) error {
		if n > 0 {
			if err := allReduce(buf[:n]); err != nil {
				return fusedError(grads[from:to], fused, err)
			}
			off := 0
			for _, g := range grads[from:to] {
				if fused(g) {
					off += copy(of(g), buf[off:n])
				}
			}
		}
		from, n = to, 0
		return nil
	}
	for i, g := range grads {
		x := of(g)
		if x == nil {
			continue
		}
		if len(x) >= alone {
			if err := allReduce(x); err != nil {
				return fusedError(grads[i:i+1], func(Grad) bool { return true }, err)
			}
			continue
		}
		if n+len(x) > limit {
			if err := flush(i); err != nil {
				return err
			}
		}
		n += copy(buf[n:], x)
	}
	return flush(len(grads))
}

// fusedError is clusterError for a reduction of the gradients g of grads
// for which in(g) is true.
func fusedError(grads []Grad, in func(Grad) bool, err error) error {
	var first, last string
	vars := 0
	for _, g := range grads {
		if in(g) {
			if vars == 0 {
				first = g.Var.Name()
			}
			last = g.Var.Name()
			vars++
		}
	}
	if vars == 1 {
		return clusterError(fmt.Sprintf("summing the gradient of %q", first), err)
	}
	return clusterError(fmt.Sprintf("summing the gradients of %d variables, %q to %q", vars, first, last), err)
}
