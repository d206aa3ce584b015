package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// beginSplit calls Begin of every split update, before the replicas start.
func (tr *trace) beginSplit() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("preparing the optimizer update: %w", panicError(v))}
		}
	}()
	for _, k := range tr.split.split {
		tr.replicas[0].ctx.updates[k].Split.Begin()
	}
	return nil
}

// applyUpdates finishes the split updates (End) and applies the others
// (applyHost), their gradients summed from the CPU programs' buffers.
func (tr *trace) applyUpdates(s *Mirrored) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &ReplicaError{Replica: 0, Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", panicError(v))}
		}
	}()
	ups := tr.replicas[0].ctx.updates
	for _, k := range tr.split.split {
		ups[k].Split.End()
	}
	return s.applyHost(ups, tr.split.rest, tr.host, &tr.grads, nil)
}

// hostGrads is where the updates Apply runs find their gradients summed
// over this worker's replicas: the CPU programs' buffers (programGrads), a
// GPU step's copies (gpuStep) or an external engine's buffers
// (externalGrads). A trace's is chosen when the step is traced.
type hostGrads interface {
	// sum returns variable i of update k, v, with its gradient summed over
	// this worker's replicas in replica order, in a buffer the step owns.
	sum(k, i int, v *graph.Variable) (Grad, error)
}

// applyHost is the one place an update's Apply is called. For each update
// ups[k], k in rest, in order, it sums each gradient over this worker's
// replicas (src) and then across workers, an update's gradients fused
// (sumAcrossFused), calls Apply once with the sums, and then after, when not
// nil. *grads is the scratch handed to Apply, kept across steps.
func (s *Mirrored) applyHost(ups []Update, rest []int, src hostGrads, grads *[]Grad, after func()) error {
	for _, k := range rest {
		u := ups[k]
		gs := (*grads)[:0]
		for i, v := range u.Vars {
			g, err := src.sum(k, i, v)
			if err != nil {
				return err
			}
			gs = append(gs, g)
		}
		*grads = gs
		if err := s.sumAcrossFused(gs); err != nil {
			return err
		}
		u.Apply(gs)
		if after != nil {
			after()
		}
	}
	return nil
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
