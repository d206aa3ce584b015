package strategy

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// The step of GPU replicas: every replica runs
// its device program on its shard; then, on the goroutine calling Run, each
// update's gradients are summed over the replicas on the devices (the add
// kernel in replica order on one device, NCCL across devices that each hold
// one replica, else through the host in replica order), the updates with a
// Split.Device run on every device's copy of their variables, whose results
// become the variables' values there (no copy to the host: the host copy is
// made lazily at the first host read, Value, a checkpoint, F32, a host
// update), and the other updates get the summed gradients on the host and
// Apply them there, after which every device copy is refreshed from the
// host at its next use.

// addSrc is the kernel that sums gradients of replicas sharing a device:
// y[i] = y[i] + x[i], as loops.AddTo.
const addSrc = `
KERNEL void strategy_add_f32(float *y, const float *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = y[i] + x[i];
}
KERNEL void strategy_add_f64(double *y, const double *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = y[i] + x[i];
}
`

// addBlock is the add kernel's threads per block.
const addBlock = 256

// addKernel returns dev's add kernel for dt, from the device's cache of
// compiled modules.
func addKernel(dev *gpu.Device, dt graph.DType) (*gpu.Function, error) {
	mod, err := dev.Module("strategy_add.cu", addSrc)
	if err != nil {
		return nil, err
	}
	if dt == graph.Float64 {
		return mod.Function("strategy_add_f64")
	}
	return mod.Function("strategy_add_f32")
}

// planGPU makes the device plan of tr, whose programs are compiled on
// s.gpus: which updates run on the devices (tr.split.split: those with a
// Split.Device that share no variable and no gradient with another update,
// as planSplit decides for the CPU; none on several workers, whose sum
// across workers is on the host) and which on the host (tr.split.rest),
// and how gradients are summed.
func (s *Mirrored) planGPU(tr *trace) error {
	n := len(tr.replicas)
	g := &gpuStep{devs: s.gpus}
	for r, d := range s.gpus {
		i := slices.IndexFunc(g.groups, func(grp []int) bool { return s.gpus[grp[0]] == d })
		if i < 0 {
			g.groups = append(g.groups, []int{r})
		} else {
			g.groups[i] = append(g.groups[i], r)
		}
	}
	if len(g.groups) == n && n > 1 && !s.noNCCL {
		g.nccl = s.ncclComms() != nil
	}
	ups := tr.replicas[0].ctx.updates
	shared := sharedUpdates(ups)
	tr.split = splitPlan{}
	g.grads = make([][][]gpu.Ptr, len(ups))
	g.host = make([][]hostGrad, len(ups))
	g.slots = make([][][]gpu.Ptr, len(ups))
	for k, u := range ups {
		device := u.Split != nil && u.Split.Device != nil && !s.multi() && !shared[k]
		if device {
			tr.split.split = append(tr.split.split, k)
		} else {
			tr.split.rest = append(tr.split.rest, k)
		}
		g.grads[k] = make([][]gpu.Ptr, len(u.Vars))
		g.host[k] = make([]hostGrad, len(u.Vars))
		g.slots[k] = make([][]gpu.Ptr, len(u.Vars))
		for i, v := range u.Vars {
			ptrs := make([]gpu.Ptr, n)
			for r, rt := range tr.replicas {
				ptrs[r] = rt.prog.Buffer(rt.ctx.updates[k].Grads[i])
			}
			g.grads[k][i] = ptrs
			// Host buffers: replica 0's for a host update; every
			// replica's when the sum goes through the host.
			hosts := 0
			if !device {
				hosts = 1
			}
			if len(g.groups) > 1 && !g.nccl {
				hosts = n
			}
			h := &g.host[k][i]
			for range hosts {
				if s.dtype == graph.Float32 {
					h.f32 = append(h.f32, make([]float32, v.Len()))
				} else {
					h.f64 = append(h.f64, make([]float64, v.Len()))
				}
			}
			if device && i < len(u.Split.Slots) {
				g.slots[k][i] = make([]gpu.Ptr, len(u.Split.Slots[i]))
			}
		}
	}
	if len(g.groups) == 1 && n > 1 {
		f, err := addKernel(s.gpus[0], s.dtype)
		if err != nil {
			return &ReplicaError{Replica: 0, Phase: "trace", Err: fmt.Errorf("compiling the gradient sum on %s: %w", s.devices[0], err)}
		}
		g.add = f
	}
	for _, rt := range tr.replicas {
		g.streams = append(g.streams, rt.prog.Stream())
	}
	tr.gpu = g
	return nil
}

// ncclComms returns the strategy's NCCL communicator over its GPUs, one
// rank per replica, made at first use, or nil when NCCL is not available.
// The caller holds runMu.
func (s *Mirrored) ncclComms() []*gpu.Comm {
	if s.comms == nil && !s.noComms {
		comms, err := gpu.CommInitAll(s.gpus)
		if err != nil {
			s.noComms = true // gpu.ErrNoNCCL, or NCCL refused: sum through the host
			return nil
		}
		s.comms = comms
	}
	return s.comms
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
			err = tr.replicas[r].prog.Stream().Synchronize()
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
// updates: those of tr.split.split on the devices, the others on the host.
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
				tr.invalidateDevice()
			}
			err = &ReplicaError{Replica: s.rank * len(s.devices), Phase: "apply", Err: fmt.Errorf("applying the optimizer update: %w", err)}
		}
	}()
	for k, u := range ups {
		for i, v := range u.Vars {
			if err := tr.sumGradient(k, i, v.Len()); err != nil {
				return fmt.Errorf("summing the gradient of %q: %w", v.Name(), err)
			}
		}
	}
	if err := tr.applyDevice(); err != nil {
		return err
	}
	deviceDone = true
	for _, k := range tr.split.split {
		ups[k].Split.End()
	}
	for _, k := range tr.split.rest {
		u := ups[k]
		tr.grads = tr.grads[:0]
		for i, v := range u.Vars {
			h := g.host[k][i]
			gr := Grad{Var: v}
			if err := tr.hostSum(k, i); err != nil {
				return fmt.Errorf("copying the gradient of %q to the host: %w", v.Name(), err)
			}
			if h.f32 != nil {
				gr.F32 = h.f32[0]
			} else {
				gr.F64 = h.f64[0]
			}
			tr.grads = append(tr.grads, gr)
		}
		if err := s.sumAcrossFused(tr.grads); err != nil {
			return err
		}
		u.Apply(tr.grads)
		// Apply wrote the host copies: every device copy is stale.
		for _, v := range s.Variables() {
			v.Invalidate()
		}
	}
	return nil
}

// sumGradient sums variable i of update k's gradient of n elements over
// the replicas: on one device into replica 0's buffer by the add kernel,
// in replica order; across devices of one replica each by NCCL, into every
// replica's buffer; otherwise on the host, in replica order, into the host
// buffer 0, copied back to the first replica's buffer on every device when
// the update runs there.
func (tr *trace) sumGradient(k, i, n int) error {
	g := tr.gpu
	bufs := g.grads[k][i]
	dt := tr.replicas[0].prog.Graph().DType()
	switch {
	case len(bufs) == 1:
		return nil
	case len(g.groups) == 1:
		s := tr.replicas[0].prog.Stream()
		grid, block := gpu.Linear(n, addBlock)
		for _, b := range bufs[1:] {
			if err := g.add.Launch(s, grid, block, bufs[0], b, n); err != nil {
				return err
			}
		}
		return s.Synchronize()
	case g.nccl:
		streams := g.streams
		// NCCL keeps a group's state per OS thread: the group's calls
		// must come from one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var err error
		if dt == graph.Float32 {
			err = gpu.AllReduceSum[float32](tr.gpuComms(), streams, bufs, bufs, n)
		} else {
			err = gpu.AllReduceSum[float64](tr.gpuComms(), streams, bufs, bufs, n)
		}
		for _, st := range streams {
			if err == nil {
				err = st.Synchronize()
			}
		}
		return err
	}
	h := g.host[k][i]
	for r, rt := range tr.replicas {
		var err error
		if h.f32 != nil {
			err = gpu.CopyDtoH(rt.prog.Stream(), h.f32[r], bufs[r])
		} else {
			err = gpu.CopyDtoH(rt.prog.Stream(), h.f64[r], bufs[r])
		}
		if err != nil {
			return err
		}
	}
	if h.f32 != nil {
		loops.AllReduceSum(h.f32)
	} else {
		loops.AllReduceSum(h.f64)
	}
	if !slices.Contains(tr.split.split, k) {
		return nil
	}
	for _, grp := range g.groups {
		rt := tr.replicas[grp[0]]
		var err error
		if h.f32 != nil {
			err = gpu.CopyHtoD(rt.prog.Stream(), bufs[grp[0]], h.f32[0])
		} else {
			err = gpu.CopyHtoD(rt.prog.Stream(), bufs[grp[0]], h.f64[0])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hostSum makes host buffer 0 of variable i of update k hold the summed
// gradient (sumGradient left it on replica 0's device, or there already).
func (tr *trace) hostSum(k, i int) error {
	g := tr.gpu
	h := g.host[k][i]
	if len(g.groups) > 1 && !g.nccl {
		return nil // summed on the host
	}
	rt := tr.replicas[0]
	if h.f32 != nil {
		return gpu.CopyDtoH(rt.prog.Stream(), h.f32[0], g.grads[k][i][0])
	}
	return gpu.CopyDtoH(rt.prog.Stream(), h.f64[0], g.grads[k][i][0])
}

// gpuComms returns the NCCL communicator of the trace's strategy.
func (tr *trace) gpuComms() []*gpu.Comm { return tr.replicas[0].ctx.s.comms }

// applyDevice runs the device updates (tr.split.split) on every device's
// copy of their variables and slots, with the summed gradient in the
// buffer of the device's first replica, and then makes those copies the
// variables' values (graph.Variable.SetDeviceNewer) without copying them to
// the host: every device computed the same values from the same inputs, and
// the host copy is made when host code reads a variable.
//
// Every copy is made current on every device before any is written, so an
// allocation or copy failing leaves every value as it was. If a launch
// fails after some devices were written, the devices not yet written keep
// the old values: a variable whose host copy was stale gets them back from
// there (with the host copy current, invalidateDevice refreshes every device
// from the host).
func (tr *trace) applyDevice() (err error) {
	g := tr.gpu
	ups := tr.replicas[0].ctx.updates
	if len(tr.split.split) == 0 {
		return nil
	}
	if g.leaders == nil {
		for _, grp := range g.groups {
			g.leaders = append(g.leaders, g.devs[grp[0]])
		}
	}
	for _, dev := range g.leaders {
		if err := tr.eachDeviceCopy(func(v *graph.Variable) error {
			_, err := v.Mirror(dev)
			return err
		}); err != nil {
			return err
		}
	}
	written := 0 // groups whose copies may have been written
	defer func() {
		if err != nil {
			tr.restoreDevice(g.leaders[written:])
		} else if v := recover(); v != nil {
			tr.restoreDevice(g.leaders[written:])
			panic(v)
		}
	}()
	for gi, grp := range g.groups {
		r := grp[0]
		dev, st := g.devs[r], tr.replicas[r].prog.Stream()
		written = gi + 1
		for _, k := range tr.split.split {
			u := ups[k]
			for i, v := range u.Vars {
				w, err := v.Mirror(dev) // current already: no copy
				if err != nil {
					return err
				}
				slots := g.slots[k][i]
				for j := range slots {
					if slots[j], err = u.Split.Slots[i][j].Mirror(dev); err != nil {
						return err
					}
				}
				if err := u.Split.Device(st, i, w, g.grads[k][i][r], slots); err != nil {
					return fmt.Errorf("updating %q on %s: %w", v.Name(), tr.replicas[r].ctx.Device(), err)
				}
			}
		}
		if err := st.Synchronize(); err != nil {
			return err
		}
	}
	return tr.eachDeviceCopy(func(v *graph.Variable) error { return v.SetDeviceNewer(g.leaders...) })
}

// eachDeviceCopy calls f on every variable and slot of the device updates,
// stopping at the first error.
func (tr *trace) eachDeviceCopy(f func(*graph.Variable) error) error {
	ups := tr.replicas[0].ctx.updates
	for _, k := range tr.split.split {
		u := ups[k]
		for i, v := range u.Vars {
			if err := f(v); err != nil {
				return err
			}
			if i < len(u.Split.Slots) {
				for _, sl := range u.Split.Slots[i] {
					if err := f(sl); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// restoreDevice makes the copies on untouched, the devices a failed device
// update did not write, the value of every variable and slot of the device
// updates whose host copy is stale. With none untouched such a variable
// keeps the last device's copy, which the failed update may have written
// (see the BUG note).
func (tr *trace) restoreDevice(untouched []*gpu.Device) {
	if len(untouched) == 0 {
		return
	}
	tr.eachDeviceCopy(func(v *graph.Variable) error {
		if !v.HostCurrent() {
			v.SetDeviceNewer(untouched...)
		}
		return nil
	})
}

// invalidateDevice marks stale every device copy that a failed device
// update may have written, for the variables whose host copy holds their
// value, so that the host's values, unchanged, are copied back at the next
// use. (Invalidate changes nothing where a device copy is newer.)
func (tr *trace) invalidateDevice() {
	tr.eachDeviceCopy(func(v *graph.Variable) error { v.Invalidate(); return nil })
}
