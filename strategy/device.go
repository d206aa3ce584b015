package strategy

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gotrain/gotrain/gpu"
)

// GPU replicas.
//
// A replica on "gpu:N" runs its step as a device program (graph.CompileOn)
// on its goroutine, locked to its OS thread with the device's context bound.
// The code here builds in every binary: without -tags cuda, package gpu
// reports ErrNotBuilt and checkDevice refuses "gpu:N", so none of it runs.

// gpuCount returns the number of GPUs, or why there are none.
func gpuCount() (int, error) { return gpu.Count() }

// checkGPU checks the "gpu:n" in d.
func checkGPU(d string, n int) error {
	count, err := gpuCount()
	switch {
	case errors.Is(err, gpu.ErrNotBuilt):
		return usageError("device %q: GPU replicas need a build with the cuda tag (go build -tags cuda); use \"cpu:N\"", d)
	case err != nil:
		return usageError("device %q: no NVIDIA GPU (%v); use \"cpu:N\"", d, err)
	case n >= count:
		return usageError("device %q: want a GPU below %d", d, count)
	}
	return nil
}

// defaultGPUs returns "gpu:0" … "gpu:K-1" for the K GPUs present, or nil.
func defaultGPUs() []string {
	count, err := gpuCount()
	if err != nil || count == 0 {
		return nil
	}
	devs := make([]string, count)
	for i := range devs {
		devs[i] = fmt.Sprintf("gpu:%d", i)
	}
	return devs
}

// openGPUs holds the devices the strategies opened, by ordinal, for the
// process's life: a variable's mirrors are keyed by the *gpu.Device, so
// every strategy and replica on one GPU must share one.
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

// placeDevices opens the GPU of each replica on one, and returns them in
// replica order (nil for a CPU replica), or nil when every replica is on a
// CPU. It panics with an error wrapping ErrUsage when CPU and GPU replicas
// are mixed.
func placeDevices(devices []string) []*gpu.Device {
	var gpus []*gpu.Device
	for r, d := range devices {
		kind, n := parseDevice(d)
		if kind != "gpu" {
			continue
		}
		if gpus == nil {
			gpus = make([]*gpu.Device, len(devices))
		}
		dev, err := openGPU(n)
		if err != nil {
			panic(fmt.Errorf("strategy: replica %d on %s: %w", r, d, err))
		}
		gpus[r] = dev
	}
	for r, dev := range gpus {
		if dev == nil {
			panic(usageError("devices %v: replica %d is on a CPU and others on GPUs; put every replica on GPUs or every one on CPUs", devices, r))
		}
	}
	return gpus
}

// gpuStep is a trace's device state: what each update's gradients are on
// every replica's device and how they are summed across replicas.
type gpuStep struct {
	devs   []*gpu.Device // [replica]
	groups [][]int       // replicas by device, in order of first appearance; each in replica order
	// nccl is set when every replica has a GPU of its own and NCCL is
	// available: the gradients are summed by one ncclAllReduce over the
	// replicas. Otherwise replicas sharing a device are summed there by the
	// add kernel, in replica order, and several devices through the host.
	nccl    bool
	streams []*gpu.Stream // [replica]: each replica's program stream, for NCCL's grouped calls
	grads   [][][]gpu.Ptr // [update][variable][replica]: the gradient buffers
	host    [][]hostGrad  // [update][variable]: the summed gradient's host copy
	slots   [][][]gpu.Ptr // [update][variable]: scratch for a device update's slot copies
	add     *gpu.Function // the add kernel on the one device; nil with several devices or one replica
	// leaders are the devices of groups, in order, made at the first device
	// update: those whose copies a device update writes.
	leaders []*gpu.Device
}

// hostGrad is a gradient's host buffers: every replica's (for sums across
// devices through the host; index 0 holds the sum).
type hostGrad struct {
	f32 [][]float32 // [replica], nil for a float64 strategy
	f64 [][]float64
}
