package nn

import (
	"fmt"

	"github.com/gotrain/gotrain/gpu"
)

// deviceRule is an optimizer's update rule on a GPU (issue 13): o.update on
// device copies, through kernels.*UpdateDevice in a binary built with
// -tags cuda. step and lr are as for o.update; w and g are the copies of v
// and its gradient, n its length; slots are the copies of the variable's
// slots, in o.slots's order. Without the tag no optimizer has one.
type deviceRule func(st *gpu.Stream, p *deviceParams, step int, lr float64, v *Variable, w, g gpu.Ptr, n int, slots []gpu.Ptr) error

// deviceSplit returns the Split.Device of o's update of vars, whose slots
// are slots, reading the step number and rate that Begin wrote to *step
// and *lr, or nil when o has no device rule.
func (o *optimizer) deviceSplit(step *int, lr *float64, vars []*Variable) func(st *gpu.Stream, i int, w, g gpu.Ptr, slots []gpu.Ptr) error {
	if o.rule == nil {
		return nil
	}
	return func(st *gpu.Stream, i int, w, g gpu.Ptr, slots []gpu.Ptr) error {
		p, err := o.paramsOn(st.Device())
		if err != nil {
			return fmt.Errorf("nn: %s: %w", o.name, err)
		}
		v := vars[i]
		return o.rule(st, p, *step, *lr, v, w, g, v.Len(), slots)
	}
}
