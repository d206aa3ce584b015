package graph

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gotrain/gotrain/gpu"
)

// Replicas on GPUs.
//
// A data-parallel step runs one device program per replica (CompileOn);
// GPUs is the devices those replicas are on, and DeviceStep what happens
// between the programs once they have run: a gradient summed over the
// replicas on the devices and copied to the host, and element-wise updates
// run on every device's copy of their variables. Package strategy decides
// which update runs where and calls these; every copy, kernel and NCCL call
// of the step is made here. The code builds in every binary: without -tags
// cuda, package gpu reports ErrNotBuilt and OpenGPUs fails.

// GPUCount returns the number of NVIDIA GPUs, or why there are none: in a
// binary built without -tags cuda, an error wrapping gpu.ErrNotBuilt.
func GPUCount() (int, error) { return gpu.Count() }

// CUDABuilt reports whether the binary was built with -tags cuda, so that
// programs can compile on GPUs (given one).
func CUDABuilt() bool {
	_, err := gpu.Count()
	return !errors.Is(err, gpu.ErrNotBuilt)
}

// openGPUs holds the devices opened for replicas, by ordinal, for the
// process's life: a variable's mirrors are keyed by the *gpu.Device, so
// every program on one GPU must use one.
var openGPUs struct {
	sync.Mutex
	devs map[int]*gpu.Device
}

// openGPU returns the process's *gpu.Device for ordinal n, opening it on
// first use.
func openGPU(n int) (*gpu.Device, error) {
	openGPUs.Lock()
	defer openGPUs.Unlock()
	if d := openGPUs.devs[n]; d != nil {
		return d, nil
	}
	d, err := gpu.Open(n)
	if err != nil {
		return nil, err
	}
	if openGPUs.devs == nil {
		openGPUs.devs = make(map[int]*gpu.Device)
	}
	openGPUs.devs[n] = d
	return d, nil
}

// GPUs are the devices of a data-parallel step's replicas, one per replica
// in replica order; replicas may share a device. Bind and Compile are safe
// for concurrent use; Step and Close are called by one goroutine at a time.
type GPUs struct {
	devs   []*gpu.Device // [replica]; immutable
	groups [][]int       // replicas by device, in order of first appearance; each in replica order; immutable
	noNCCL bool          // immutable; never sum across GPUs with NCCL

	comms   []*gpu.Comm // NCCL communicator over devs, one rank per replica, made at the first Step that can use it
	noComms bool        // NCCL was tried and is not available
}

// OpenGPUs returns the GPUs of ordinals, replica r on GPU ordinals[r],
// opening each at its first use in the process. With nccl false, gradients
// are never summed across GPUs by NCCL (but through the host). The error of
// a GPU that fails to open names its replica.
func OpenGPUs(ordinals []int, nccl bool) (*GPUs, error) {
	d := &GPUs{devs: make([]*gpu.Device, len(ordinals)), noNCCL: !nccl}
	for r, n := range ordinals {
		dev, err := openGPU(n)
		if err != nil {
			return nil, fmt.Errorf("replica %d on gpu:%d: %w", r, n, err)
		}
		d.devs[r] = dev
		i := -1
		for j, grp := range d.groups {
			if d.devs[grp[0]] == dev {
				i = j
			}
		}
		if i < 0 {
			d.groups = append(d.groups, []int{r})
		} else {
			d.groups[i] = append(d.groups[i], r)
		}
	}
	return d, nil
}

// Bind makes replica r's device context current on the calling OS thread,
// which the caller holds with runtime.LockOSThread (gpu.Device.Bind).
func (d *GPUs) Bind(r int) error { return d.devs[r].Bind() }

// Compile is g.CompileOn(replica r's device, outputs...).
func (d *GPUs) Compile(r int, g *Graph, outputs ...*Node) (*Program, error) {
	return g.CompileOn(d.devs[r], outputs...)
}

// Close destroys the NCCL communicator, if one was made; the GPUs stay open
// for the process. The GPUs must not be used afterwards.
func (d *GPUs) Close() {
	for _, c := range d.comms {
		c.Destroy()
	}
	d.comms = nil
}

// ncclComms returns the NCCL communicator over d's devices, one rank per
// replica, made at first use, or nil when NCCL is not available.
func (d *GPUs) ncclComms() []*gpu.Comm {
	if d.comms == nil && !d.noComms {
		comms, err := gpu.CommInitAll(d.devs)
		if err != nil {
			d.noComms = true // gpu.ErrNoNCCL, or NCCL refused: sum through the host
			return nil
		}
		d.comms = comms
	}
	return d.comms
}
