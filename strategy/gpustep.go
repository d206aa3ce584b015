package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
)

// The step of GPU replicas: every replica runs its device program on its
// shard; then, on the goroutine calling Run, each update's gradients are
// summed over the replicas on the devices (graph.DeviceGrad.Sum), the
// updates that are a DeviceSplit run on every device's copy of their
// variables (graph.DeviceStep.Apply), whose results become the variables'
// values there (no copy to the host: the host copy is made lazily at the
// first host read, Value, a checkpoint, F32, a host update), and the other
// updates get the summed gradients on the host and Apply them there
// (updatePlan.apply, as on CPUs), after which every device copy is
// refreshed from the host at its next use.

// planGPU makes the device plan of tr, whose programs are compiled on
// s.gpus: which updates run on the devices (tr.plan.split: the DeviceSplits
// that share no variable and no gradient with another update, as planSplit
// decides for the CPU; none on several workers, whose sum across workers is
// on the host) and which on the host (tr.plan.rest, their gradients copied
// from the devices).
func (s *Mirrored) planGPU(tr *trace) error {
	progs := make([]*graph.Program, len(tr.replicas))
	for r, rt := range tr.replicas {
		progs[r] = rt.prog
	}
	st, err := s.gpus.Step(progs)
	if err != nil {
		return &ReplicaError{Replica: 0, Phase: "trace", Err: err}
	}
	g := &gpuStep{step: st}
	ups := tr.replicas[0].ctx.updates
	shared := sharedUpdates(ups)
	plan := newPlan(ups, g)
	g.grads = make([][]*graph.DeviceGrad, len(ups))
	nodes := make([]*graph.Node, len(tr.replicas))
	for k, u := range ups {
		ds, device := u.Update.(DeviceSplit)
		device = device && !s.multi() && !shared[k]
		if device {
			plan.shareAt(k, ds)
		} else {
			plan.rest = append(plan.rest, k)
		}
		g.grads[k] = make([]*graph.DeviceGrad, len(u.Vars))
		for i := range u.Vars {
			for r, rt := range tr.replicas {
				nodes[r] = rt.ctx.updates[k].Grads[i]
			}
			g.grads[k][i] = st.Gradient(nodes, device)
		}
		if device {
			g.device = append(g.device, graph.DeviceApply{Vars: u.Vars, Slots: ds.Slots(), Grads: g.grads[k], Update: ds.Device()})
		}
	}
	tr.gpu, tr.plan = g, plan
	return nil
}

// executeGPU is execute for GPU replicas.
func (s *Mirrored) executeGPU(tr *trace, in *stepInputs) (PerReplica, error) {
	if err := tr.begin(in); err != nil {
		return PerReplica{}, err
	}
	vals := tr.newOutputs()
	errs := s.onReplicas(true, func(r int) error {
		err := tr.runReplica(r, in, vals)
		if err == nil {
			// The gradients are read from other streams next.
			err = tr.gpu.step.Wait(r)
		}
		if err == nil && tr.checks != nil {
			err = tr.checkNumerics(r, vals)
		}
		return err
	})
	if err := s.agreeStep(s.runFailure(errs, in)); err != nil {
		return PerReplica{}, err
	}
	if err := tr.applyGPU(s); err != nil {
		return PerReplica{}, err
	}
	return tr.outputs(in, vals), nil
}

// applyGPU sums every update's gradients over the replicas and applies the
// updates: those of tr.plan.split on the devices, the others on the host.
// A failure before any host update leaves every variable unchanged: the
// device copies a failed step wrote are marked stale.
func (tr *trace) applyGPU(s *Mirrored) (err error) {
	g := tr.gpu
	ups := tr.replicas[0].ctx.updates
	deviceDone := false
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
		if err != nil {
			if !deviceDone {
				g.step.Invalidate(g.device)
			}
			err = &ReplicaError{Replica: s.rank * len(s.devices), Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", err)}
		}
	}()
	for k, u := range ups {
		for i, v := range u.Vars {
			if err := g.grads[k][i].Sum(); err != nil {
				return fmt.Errorf("summing the gradient of %q: %w", v.Name(), err)
			}
		}
	}
	if err := g.step.Apply(g.device); err != nil {
		return err
	}
	deviceDone = true
	// Apply writes the host copies: every device copy is then stale.
	return tr.plan.apply(s, func() {
		for _, v := range s.Variables() {
			v.Invalidate()
		}
	})
}

// sum copies variable i of update k's gradient, summed on the devices, to
// the host.
func (g *gpuStep) sum(k, i int, v *graph.Variable) (Grad, error) {
	f32, f64, err := g.grads[k][i].Host()
	if err != nil {
		return Grad{}, fmt.Errorf("copying the gradient of %q to the host: %w", v.Name(), err)
	}
	return Grad{Var: v, F32: f32, F64: f64}, nil
}
