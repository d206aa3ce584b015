package graph

import (
	"fmt"
	"runtime"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/internal/loops"
)

// addSrc is the kernel that sums gradients of replicas sharing a device:
// y[i] = y[i] + x[i], as loops.AddTo.
const addSrc = `
KERNEL void replicas_add_f32(float *y, const float *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = y[i] + x[i];
}
KERNEL void replicas_add_f64(double *y, const double *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = y[i] + x[i];
}
`

// addBlock is the add kernel's threads per block.
const addBlock = 256

// DeviceStep is a step's device work between the programs of GPUs'
// replicas, once they have run: it sums each gradient over the replicas
// (the add kernel in replica order on one device, NCCL across devices that
// each hold one replica, else through the host in replica order), copies
// sums to the host, and runs element-wise updates on every device's copy of
// their variables. It is used by one goroutine at a time.
type DeviceStep struct {
	gpus    *GPUs
	progs   []*Program    // [replica]
	dt      DType         // the programs' dtype
	nccl    bool          // gradients are summed by one ncclAllReduce over the replicas
	streams []*gpu.Stream // [replica]: each program's stream, for NCCL's grouped calls
	add     *gpu.Function // the add kernel on the one device; nil with several devices or one replica
	leaders []*gpu.Device // each device's, in the order of GPUs' groups: the copies Apply writes
}

// Step returns the device work of a step whose replica r runs progs[r],
// compiled by d.Compile(r, ...). It decides how gradients are summed: by
// NCCL when every replica has a GPU of its own and NCCL is available (the
// communicator is made at the first such Step), by the add kernel, compiled
// here, when all share one GPU, else through the host. A compile error names
// replica 0's device.
func (d *GPUs) Step(progs []*Program) (*DeviceStep, error) {
	n := len(progs)
	st := &DeviceStep{gpus: d, progs: progs, dt: progs[0].Graph().DType()}
	if len(d.groups) == n && n > 1 && !d.noNCCL {
		st.nccl = d.ncclComms() != nil
	}
	if len(d.groups) == 1 && n > 1 {
		mod, err := d.devs[0].Module("replicas_add.cu", addSrc)
		if err == nil {
			name := "replicas_add_f32"
			if st.dt == Float64 {
				name = "replicas_add_f64"
			}
			st.add, err = mod.Function(name)
		}
		if err != nil {
			return nil, fmt.Errorf("compiling the gradient sum on %s: %w", d.devs[0], err)
		}
	}
	for _, p := range progs {
		st.streams = append(st.streams, p.Stream())
	}
	for _, grp := range d.groups {
		st.leaders = append(st.leaders, d.devs[grp[0]])
	}
	return st, nil
}

// Wait waits for the work replica r's program enqueued, so that its buffers
// may be read from other streams.
func (st *DeviceStep) Wait(r int) error { return st.streams[r].Synchronize() }

// DeviceGrad is one variable's gradient in a DeviceStep: a node of every
// replica's program, and the host buffers its sum goes through.
type DeviceGrad struct {
	st       *DeviceStep
	n        int         // elements
	bufs     []gpu.Ptr   // [replica]: the gradient's buffers
	onDevice bool        // a device update uses the sum: a sum through the host is copied back
	f32      [][]float32 // host buffers, [replica] when the sum goes through the host, else one; nil for Float64
	f64      [][]float64
}

// Gradient returns the gradient whose value in replica r is grads[r], a node
// of progs[r]. onDevice says that an update on the devices (Apply) uses its
// sum, else Host does. Its host buffers are made here, once.
func (st *DeviceStep) Gradient(grads []*Node, onDevice bool) *DeviceGrad {
	g := &DeviceGrad{st: st, n: grads[0].Len(), onDevice: onDevice}
	for r, p := range st.progs {
		g.bufs = append(g.bufs, p.Buffer(grads[r]))
	}
	// Host buffers: one for a host update; every replica's when the sum
	// goes through the host.
	hosts := 1
	if onDevice {
		hosts = 0
	}
	if len(st.gpus.groups) > 1 && !st.nccl {
		hosts = len(st.progs)
	}
	for range hosts {
		if st.dt == Float32 {
			g.f32 = append(g.f32, make([]float32, g.n))
		} else {
			g.f64 = append(g.f64, make([]float64, g.n))
		}
	}
	return g
}

// Sum sums the gradient over the replicas: on one device into replica 0's
// buffer by the add kernel, in replica order; across devices of one replica
// each by NCCL, into every replica's buffer; otherwise on the host, in
// replica order, into host buffer 0, copied back to the first replica's
// buffer on every device when a device update uses it. It returns when the
// sum is complete.
func (g *DeviceGrad) Sum() error {
	st := g.st
	bufs, n := g.bufs, g.n
	switch {
	case len(bufs) == 1:
		return nil
	case len(st.gpus.groups) == 1:
		s := st.streams[0]
		grid, block := gpu.Linear(n, addBlock)
		for _, b := range bufs[1:] {
			if err := st.add.Launch(s, grid, block, bufs[0], b, n); err != nil {
				return err
			}
		}
		return s.Synchronize()
	case st.nccl:
		// NCCL keeps a group's state per OS thread: the group's calls
		// must come from one.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var err error
		if st.dt == Float32 {
			err = gpu.AllReduceSum[float32](st.gpus.comms, st.streams, bufs, bufs, n)
		} else {
			err = gpu.AllReduceSum[float64](st.gpus.comms, st.streams, bufs, bufs, n)
		}
		for _, s := range st.streams {
			if err == nil {
				err = s.Synchronize()
			}
		}
		return err
	}
	for r, s := range st.streams {
		var err error
		if g.f32 != nil {
			err = gpu.CopyDtoH(s, g.f32[r], bufs[r])
		} else {
			err = gpu.CopyDtoH(s, g.f64[r], bufs[r])
		}
		if err != nil {
			return err
		}
	}
	if g.f32 != nil {
		loops.AllReduceSum(g.f32)
	} else {
		loops.AllReduceSum(g.f64)
	}
	if !g.onDevice {
		return nil
	}
	for _, grp := range st.gpus.groups {
		r := grp[0]
		var err error
		if g.f32 != nil {
			err = gpu.CopyHtoD(st.streams[r], bufs[r], g.f32[0])
		} else {
			err = gpu.CopyHtoD(st.streams[r], bufs[r], g.f64[0])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Host returns the sum (after Sum) on the host, in the step's dtype: f32
// for Float32, f64 for Float64. The slice is the gradient's, rewritten at
// the next step; the caller may scratch it.
func (g *DeviceGrad) Host() (f32 []float32, f64 []float64, err error) {
	st := g.st
	if len(st.gpus.groups) == 1 || st.nccl {
		// Sum left it on replica 0's device.
		if g.f32 != nil {
			err = gpu.CopyDtoH(st.streams[0], g.f32[0], g.bufs[0])
		} else {
			err = gpu.CopyDtoH(st.streams[0], g.f64[0], g.bufs[0])
		}
	}
	if g.f32 != nil {
		return g.f32[0], nil, err
	}
	return nil, g.f64[0], err
}

// DeviceUpdate enqueues on s the update of the copy at w, on s's device, of
// variable i of an update, with g its gradient summed over replicas on that
// device and slots the copies of the variable's slots, aligned with them.
// nn's optimizers make theirs from loops' device kernels.
type DeviceUpdate func(s *gpu.Stream, i int, w, g gpu.Ptr, slots []gpu.Ptr) error

// DeviceApply is one element-wise update that a DeviceStep runs on every
// device's copy of its variables.
type DeviceApply struct {
	Vars   []*Variable
	Slots  [][]*Variable // aligned with Vars: the variables besides Vars[i] its update writes
	Grads  []*DeviceGrad // aligned with Vars, from Gradient(..., true)
	Update DeviceUpdate

	slots [][]gpu.Ptr // scratch for Slots' copies on one device, made at the first Apply
}

// Apply runs ups (after their gradients' Sum) on every device's copy of
// their variables and slots, with the summed gradient in the buffer of the
// device's first replica, and then makes those copies the variables' values
// (Variable.SetDeviceNewer) without copying them to the host: every device
// computed the same values from the same inputs, and the host copy is made
// when host code reads a variable.
//
// Every copy is made current on every device before any is written, so an
// allocation or copy failing leaves every value as it was. If a launch
// fails after some devices were written, the devices not yet written keep
// the old values: a variable whose host copy was stale gets them back from
// there (with the host copy current, Invalidate refreshes every device from
// the host).
func (st *DeviceStep) Apply(ups []DeviceApply) (err error) {
	if len(ups) == 0 {
		return nil
	}
	leaders := st.leaders
	for _, dev := range leaders {
		if err := eachDeviceCopy(ups, func(v *Variable) error {
			_, err := v.Mirror(dev)
			return err
		}); err != nil {
			return err
		}
	}
	written := 0 // groups whose copies may have been written
	defer func() {
		if err != nil {
			restoreDevice(ups, leaders[written:])
		} else if v := recover(); v != nil {
			restoreDevice(ups, leaders[written:])
			panic(v)
		}
	}()
	for gi, grp := range st.gpus.groups {
		r := grp[0]
		dev, s := st.gpus.devs[r], st.streams[r]
		written = gi + 1
		for k := range ups {
			u := &ups[k]
			if u.slots == nil {
				u.slots = make([][]gpu.Ptr, len(u.Vars))
				for i := range u.Vars {
					if i < len(u.Slots) {
						u.slots[i] = make([]gpu.Ptr, len(u.Slots[i]))
					}
				}
			}
			for i, v := range u.Vars {
				w, err := v.Mirror(dev) // current already: no copy
				if err != nil {
					return err
				}
				slots := u.slots[i]
				for j := range slots {
					if slots[j], err = u.Slots[i][j].Mirror(dev); err != nil {
						return err
					}
				}
				if err := u.Update(s, i, w, u.Grads[i].bufs[r], slots); err != nil {
					return fmt.Errorf("updating %q on %s: %w", v.Name(), dev, err)
				}
			}
		}
		if err := s.Synchronize(); err != nil {
			return err
		}
	}
	return eachDeviceCopy(ups, func(v *Variable) error { return v.SetDeviceNewer(leaders...) })
}

// Invalidate marks stale every device copy of the variables and slots of
// ups that a failed step may have written, for the variables whose host
// copy holds their value, so that the host's values, unchanged, are copied
// back at the next use. (Invalidate changes nothing where a device copy is
// newer.)
func (st *DeviceStep) Invalidate(ups []DeviceApply) {
	eachDeviceCopy(ups, func(v *Variable) error { v.Invalidate(); return nil })
}

// eachDeviceCopy calls f on every variable and slot of ups, stopping at the
// first error.
func eachDeviceCopy(ups []DeviceApply, f func(*Variable) error) error {
	for _, u := range ups {
		for i, v := range u.Vars {
			if err := f(v); err != nil {
				return err
			}
			if i < len(u.Slots) {
				for _, sl := range u.Slots[i] {
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
// update did not write, the value of every variable and slot of ups whose
// host copy is stale. With none untouched such a variable keeps the last
// device's copy, which the failed update may have written (see strategy's
// BUG note on device updates).
func restoreDevice(ups []DeviceApply, untouched []*gpu.Device) {
	if len(untouched) == 0 {
		return
	}
	eachDeviceCopy(ups, func(v *Variable) error {
		if !v.HostCurrent() {
			v.SetDeviceNewer(untouched...)
		}
		return nil
	})
}
