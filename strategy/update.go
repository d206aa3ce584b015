package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/kernels"
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

// applyUpdates finishes the split updates (End) and applies the others: it
// sums each of their gradients across replicas, in a fixed order (this
// worker's replicas, then across workers), and calls each Apply once with
// the sums.
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
	for _, k := range tr.split.rest {
		u := ups[k]
		tr.grads = tr.grads[:0]
		for i, v := range u.Vars {
			for r, rt := range tr.replicas {
				gn := rt.ctx.updates[k].Grads[i]
				tr.bufs32[r] = rt.prog.F32(gn)
				tr.bufs64[r] = rt.prog.F64(gn)
			}
			g := Grad{Var: v}
			if tr.bufs32[0] != nil {
				kernels.AllReduceSum(tr.bufs32)
				g.F32 = tr.bufs32[0]
			} else {
				kernels.AllReduceSum(tr.bufs64)
				g.F64 = tr.bufs64[0]
			}
			if err := s.sumAcross(g); err != nil {
				return err
			}
			tr.grads = append(tr.grads, g)
		}
		u.Apply(tr.grads)
	}
	return nil
}
