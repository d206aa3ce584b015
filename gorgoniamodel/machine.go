package gorgoniamodel

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// machine is one replica's compiled graph: a gorgonia TapeMachine that
// strategy.RunExternal runs on the replica's goroutine.
type machine struct {
	r     *Replica
	vm    G.VM
	grads map[*graph.Variable]*G.Node // the parameter nodes, whose dual values hold the gradients
}

var _ strategy.ExternalReplica = (*machine)(nil)

// newMachine differentiates r's loss with respect to its parameters (for a
// training graph) and compiles the graph.
func newMachine(r *Replica) (mc *machine, err error) {
	defer func() {
		if v := recover(); v != nil {
			mc, err = nil, fmt.Errorf("gorgoniamodel: compiling the graph: %w", panicError(v))
		}
	}()
	mc = &machine{r: r, grads: make(map[*graph.Variable]*G.Node, len(r.vars))}
	if r.training {
		if _, err := G.Grad(r.loss, r.params...); err != nil {
			return nil, fmt.Errorf("gorgoniamodel: the gradient of the loss with respect to the parameters: %w", err)
		}
		mc.vm = G.NewTapeMachine(r.g, G.BindDualValues(r.params...))
	} else {
		mc.vm = G.NewTapeMachine(r.g)
	}
	for i, v := range r.vars {
		mc.grads[v] = r.params[i]
	}
	return mc, nil
}

// names returns the parts of the PerReplica the machine's outputs make: nil
// for the loss alone, else "loss" (when there is one) and each output.
func (mc *machine) names() []string {
	if len(mc.r.outputs) == 0 {
		return nil
	}
	var out []string
	if mc.r.loss != nil {
		out = append(out, "loss")
	}
	for _, o := range mc.r.outputs {
		out = append(out, o.name)
	}
	return out
}

// RunStep feeds the replica's shard, its mask, the global count and the
// one-hot labels, clears the gradients gorgonia would add to, and runs the
// machine.
func (mc *machine) RunStep(in strategy.ExternalInput) ([]data.Tensor, error) {
	r := mc.r
	for k, a := range in.Args {
		fill(r.inputs[k].Value().(tensor.Tensor), a.Data)
	}
	if r.mask != nil {
		m := r.mask.Value().(tensor.Tensor)
		if len(in.Mask.Data) == 0 {
			ones(m)
		} else {
			fill(m, in.Mask.Data)
		}
	}
	if r.invCount != nil {
		inv := 0.0
		if in.GlobalCount > 0 {
			inv = 1 / in.GlobalCount
		}
		if err := G.Let(r.invCount, scalar(r.dt, inv)); err != nil {
			return nil, fmt.Errorf("gorgoniamodel: feeding the global count: %w", err)
		}
	}
	for _, o := range r.oneHots {
		if err := encode(o, in); err != nil {
			return nil, err
		}
	}
	if r.training {
		for _, n := range r.params {
			// Before the first run a dual value has no gradient yet.
			if g, err := n.Grad(); err == nil && g != nil {
				clearValue(g)
			}
		}
	}
	defer mc.vm.Reset()
	if err := mc.vm.RunAll(); err != nil {
		return nil, fmt.Errorf("gorgonia: %w", err)
	}
	var out []data.Tensor
	if r.loss != nil {
		out = append(out, hostCopy(r.loss.Value()))
	}
	for _, o := range r.outputs {
		out = append(out, hostCopy(o.node.Value()))
	}
	return out, nil
}

// Gradient returns the gradient of v that the last run computed: the dual
// value of v's parameter node.
func (mc *machine) Gradient(v *graph.Variable) strategy.Grad {
	n := mc.grads[v]
	if n == nil {
		return strategy.Grad{}
	}
	g, err := n.Grad()
	if err != nil || g == nil {
		return strategy.Grad{}
	}
	switch d := g.Data().(type) {
	case []float32:
		return strategy.Grad{F32: d}
	case []float64:
		return strategy.Grad{F64: d}
	}
	return strategy.Grad{}
}

// encode writes the one-hot encoding of input o.input's labels into o.buf:
// padding rows stay zero, and a real row's label must be a class id.
func encode(o oneHot, in strategy.ExternalInput) error {
	labels := in.Args[o.input].Data
	clearValue(o.buf)
	for i, l := range labels {
		if len(in.Mask.Data) > 0 && in.Mask.Data[i] == 0 {
			continue
		}
		c := int(l)
		if float64(c) != l || c < 0 || c >= o.classes {
			return fmt.Errorf("gorgoniamodel: OneHot: example %d of the global batch (row %d of the replica's shard): want a label in [0,%d), got %v",
				in.First+i, i, o.classes, l)
		}
		switch d := o.buf.Data().(type) {
		case []float32:
			d[i*o.classes+c] = 1
		case []float64:
			d[i*o.classes+c] = 1
		}
	}
	return nil
}

// fill converts src into t's float32 or float64 storage.
func fill(t tensor.Tensor, src []float64) {
	switch d := t.Data().(type) {
	case []float32:
		for i, x := range src {
			d[i] = float32(x)
		}
	case []float64:
		copy(d, src)
	}
}

func ones(t tensor.Tensor) {
	switch d := t.Data().(type) {
	case []float32:
		for i := range d {
			d[i] = 1
		}
	case []float64:
		for i := range d {
			d[i] = 1
		}
	}
}

func clearValue(v G.Value) {
	switch d := v.Data().(type) {
	case []float32:
		clear(d)
	case []float64:
		clear(d)
	}
}

// hostCopy copies a gorgonia value (a tensor or a scalar) into a data.Tensor.
func hostCopy(v G.Value) data.Tensor {
	switch d := v.Data().(type) {
	case float32:
		return data.Tensor{Data: []float64{float64(d)}}
	case float64:
		return data.Tensor{Data: []float64{d}}
	case []float32:
		out := make([]float64, len(d))
		for i, x := range d {
			out[i] = float64(x)
		}
		return data.Tensor{Shape: []int(v.Shape()), Data: out}
	case []float64:
		return data.Tensor{Shape: []int(v.Shape()), Data: append([]float64(nil), d...)}
	}
	panic(fmt.Sprintf("gorgoniamodel: a value of type %T", v.Data()))
}
