package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/graph"
)

// deviceRule is an optimizer's update rule on a GPU: its update
// on device copies, through loops.*UpdateDevice in a binary built with
// -tags cuda. step and lr are as for updateRule.update; w and g are the
// copies of v and its gradient, n its length; slots are the copies of the
// variable's slots, in o.slots's order. Without the tag no optimizer has
// one.
type deviceRule func(st *gpu.Stream, p *deviceParams, step int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error

// Device returns the update on a GPU: applyDevice.
func (u *optimizerDeviceSplit) Device() graph.DeviceUpdate { return u.applyDevice }

// applyDevice enqueues on st the update of variable i's copy at w, with its
// summed gradient at g and its slots' copies, by the optimizer's device
// rule, with the step number and rate that Begin read.
func (u *optimizerDeviceSplit) applyDevice(st *gpu.Stream, i int, w, g gpu.Ptr, slots []gpu.Ptr) error {
	o := u.o
	p, err := o.paramsOn(st.Device())
	if err != nil {
		return fmt.Errorf("nn: %s: %w", o.name, err)
	}
	v := u.vars[i]
	return o.device(st, p, u.n, u.lr, v, w, g, v.Len(), slots)
}
