package nn

import (
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/strategy"
)

// Sequential is a model that applies its layers in order (keras.Sequential).
type Sequential struct {
	layerBase
	layers  []Layer
	inShape []int // input shape of the first call or Build, nil before

	// The step functions of Predict and Evaluate, made on first use and
	// kept so that the strategy's trace cache finds them.
	predict  func(ctx *strategy.ReplicaContext, x *Tensor) *Tensor
	evaluate func(ctx *strategy.ReplicaContext, x *Tensor, rest ...*Tensor) *Tensor
}

// NewSequential returns a model of the given layers, named sequential,
// sequential_1, ... within the current strategy.
func NewSequential(layers ...Layer) *Sequential {
	for i, l := range layers {
		if l == nil {
			panic(usageError("NewSequential: layer %d is nil", i))
		}
	}
	return &Sequential{layerBase: newBase(strategy.UniqueName("sequential")), layers: append([]Layer(nil), layers...)}
}

// Add appends a layer.
func (m *Sequential) Add(l Layer) {
	if l == nil {
		panic(usageError("%s: Add: want a layer, got nil", m.name))
	}
	m.layers = append(m.layers, l)
}

// Layers returns the layers in order.
func (m *Sequential) Layers() []Layer { return append([]Layer(nil), m.layers...) }

// Call applies every layer in order to x, building layers on the first call.
func (m *Sequential) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	if x == nil {
		panic(usageError("%s: want an input tensor, got nil", m.name))
	}
	if m.inShape == nil {
		m.inShape = x.Shape()
	}
	for _, l := range m.layers {
		x = l.Call(ctx, x, training)
	}
	return x
}

// Build creates every layer's variables for inputs of shape inputShape
// (batch axis first; its size does not matter), under the current strategy.
// Building outside any scope creates unscoped variables that strategy.Run
// refuses, as TensorFlow does.
func (m *Sequential) Build(inputShape []int) {
	m.inShape = append([]int(nil), inputShape...)
	shape := m.inShape
	for _, l := range m.layers {
		l.Build(shape)
		shape = l.OutputShape(shape)
	}
}

// Built reports whether every layer has its variables.
func (m *Sequential) Built() bool {
	for _, l := range m.layers {
		if !l.Built() {
			return false
		}
	}
	return true
}

// OutputShape returns the model's output shape for an input shape.
func (m *Sequential) OutputShape(inputShape []int) []int {
	shape := inputShape
	for _, l := range m.layers {
		shape = l.OutputShape(shape)
	}
	return shape
}

// Variables returns every layer's variables, in layer order, each once (a
// layer added twice shares its weights).
func (m *Sequential) Variables() []*Variable {
	var vs []*Variable
	seen := make(map[*Variable]bool)
	for _, l := range m.layers {
		vs = appendUnique(vs, seen, l.Variables())
	}
	return vs
}

// TrainableVariables returns every layer's trainable variables, in layer
// order, each once; empty until the model is built.
func (m *Sequential) TrainableVariables() []*Variable { return trainable(m.Variables()) }

// SetTrainable freezes or unfreezes every layer (keras: model.trainable).
// Layers added later keep their own setting.
func (m *Sequential) SetTrainable(t bool) {
	m.frozen = !t
	for _, l := range m.layers {
		l.SetTrainable(t)
	}
}

// Summary describes the model as Keras's model.summary does: one row per
// layer with its output shape and parameter count, then the totals. Shapes
// and counts of layers not built yet show as "?".
func (m *Sequential) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Model: %q\n", m.name)
	const row = "%-28s %-20s %10s\n"
	rule := strings.Repeat("─", 60) + "\n"
	b.WriteString(rule)
	fmt.Fprintf(&b, row, "Layer (type)", "Output Shape", "Param #")
	b.WriteString(rule)
	total, train := 0, 0
	shape := m.inShape
	for _, l := range m.layers {
		out, params := "?", "?"
		if shape != nil {
			shape = l.OutputShape(shape)
			out = shapeString(shape)
		}
		if l.Built() {
			n := 0
			for _, v := range l.Variables() {
				n += v.Len()
				if v.Trainable() {
					train += v.Len()
				}
			}
			total += n
			params = fmt.Sprint(n)
		}
		fmt.Fprintf(&b, row, fmt.Sprintf("%s (%s)", l.Name(), layerType(l)), out, params)
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "Total params: %d\nTrainable params: %d\nNon-trainable params: %d\n", total, train, total-train)
	return b.String()
}

// shapeString writes a shape Keras style, the batch axis as None.
func shapeString(shape []int) string {
	parts := []string{"None"}
	for _, d := range shape[1:] {
		parts = append(parts, fmt.Sprint(d))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func layerType(l Layer) string {
	switch l.(type) {
	case *DenseLayer:
		return "Dense"
	case *Sequential:
		return "Sequential"
	}
	t := fmt.Sprintf("%T", l)
	t = t[strings.LastIndex(t, ".")+1:]
	if u := strings.TrimSuffix(t, "Layer"); u != "" {
		return u
	}
	return t
}
