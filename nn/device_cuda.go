//go:build cuda

package nn

import (
	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loops"
)

// deviceParams is a launch site's hyperparameter buffer on a device.
type deviceParams = loops.DeviceParams

// paramsOn returns o's parameter buffer on dev, allocating it at first use:
// one per optimizer and device, reused every step (the strategy applies the
// updates from one goroutine, and waits for each device's before the next
// step).
func (o *optimizer) paramsOn(dev *gpu.Device) (*deviceParams, error) {
	if p := o.params[dev]; p != nil {
		return p, nil
	}
	p, err := loops.NewDeviceParams(dev)
	if err != nil {
		return nil, err
	}
	if o.params == nil {
		o.params = make(map[*gpu.Device]*deviceParams)
	}
	o.params[dev] = p
	return p, nil
}

// The device rules of the optimizers; keep in sync with their update in
// optimizer.go.

func sgdRule(o *SGD) deviceRule {
	return func(st *gpu.Stream, p *deviceParams, _ int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error {
		lr, dt := o.pick(lr, o.LR), v.DType()
		var vel gpu.Ptr
		if o.nslot == 1 {
			vel = slots[0]
		}
		if dt == graph.Float32 {
			return loops.SGDUpdateDevice[float32](st, p, w, g, vel, n, lr, o.Momentum, o.Nesterov)
		}
		return loops.SGDUpdateDevice[float64](st, p, w, g, vel, n, lr, o.Momentum, o.Nesterov)
	}
}

func adamRule(o *Adam) deviceRule {
	return func(st *gpu.Stream, p *deviceParams, step int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error {
		lr, dt := o.pick(lr, o.LR), v.DType()
		if dt == graph.Float32 {
			return loops.AdamUpdateDevice[float32](st, p, w, g, slots[0], slots[1], n, lr, o.Beta1, o.Beta2, o.Epsilon, step)
		}
		return loops.AdamUpdateDevice[float64](st, p, w, g, slots[0], slots[1], n, lr, o.Beta1, o.Beta2, o.Epsilon, step)
	}
}

func adamWRule(o *AdamW) deviceRule {
	return func(st *gpu.Stream, p *deviceParams, step int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error {
		lr, dt := o.pick(lr, o.LR), v.DType()
		if dt == graph.Float32 {
			return loops.AdamWUpdateDevice[float32](st, p, w, g, slots[0], slots[1], n, lr, o.Beta1, o.Beta2, o.Epsilon, o.decayOf(v), step)
		}
		return loops.AdamWUpdateDevice[float64](st, p, w, g, slots[0], slots[1], n, lr, o.Beta1, o.Beta2, o.Epsilon, o.decayOf(v), step)
	}
}

func rmspropRule(o *RMSprop) deviceRule {
	return func(st *gpu.Stream, p *deviceParams, _ int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error {
		lr, dt := o.pick(lr, o.LR), v.DType()
		var mom gpu.Ptr
		if o.nslot == 2 {
			mom = slots[1]
		}
		if dt == graph.Float32 {
			return loops.RMSpropUpdateDevice[float32](st, p, w, g, slots[0], mom, n, lr, o.Rho, o.Epsilon, o.Momentum)
		}
		return loops.RMSpropUpdateDevice[float64](st, p, w, g, slots[0], mom, n, lr, o.Rho, o.Epsilon, o.Momentum)
	}
}
