package strategy

import (
	"fmt"

	"github.com/gotrain/gotrain/graph"
)

// GPU replicas.
//
// A replica on "gpu:N" runs its step as a device program (graph.GPUs'
// Compile) on its goroutine, locked to its OS thread with the device's
// context bound. The code here builds in every binary: without -tags cuda,
// graph.CUDABuilt is false and checkDevice refuses "gpu:N", so none of it
// runs.

// checkGPU checks the "gpu:n" in d.
func checkGPU(d string, n int) error {
	count, err := graph.GPUCount()
	switch {
	case !graph.CUDABuilt():
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
	count, err := graph.GPUCount()
	if err != nil || count == 0 {
		return nil
	}
	devs := make([]string, count)
	for i := range devs {
		devs[i] = fmt.Sprintf("gpu:%d", i)
	}
	return devs
}

// placeDevices opens the GPUs of the replicas, replica r on devices[r], or
// returns nil when every replica is on a CPU; with nccl false, gradients
// are never summed across GPUs by NCCL. It panics with an error wrapping
// ErrUsage when CPU and GPU replicas are mixed.
func placeDevices(devices []string, nccl bool) *graph.GPUs {
	var ordinals []int
	cpu := -1
	for r, d := range devices {
		kind, n := parseDevice(d)
		if kind != "gpu" {
			if cpu < 0 {
				cpu = r
			}
			continue
		}
		ordinals = append(ordinals, n)
	}
	if ordinals == nil {
		return nil
	}
	if cpu >= 0 {
		panic(usageError("devices %v: replica %d is on a CPU and others on GPUs; put every replica on GPUs or every one on CPUs", devices, cpu))
	}
	gpus, err := graph.OpenGPUs(ordinals, nccl)
	if err != nil {
		panic(fmt.Errorf("strategy: %w", err))
	}
	return gpus
}

// gpuStep is a trace's device state: every update's gradients on the
// replicas' devices, and the updates that run there.
type gpuStep struct {
	step   *graph.DeviceStep
	grads  [][]*graph.DeviceGrad // [update][variable]
	device []graph.DeviceApply   // the updates of split.split, in order
}
