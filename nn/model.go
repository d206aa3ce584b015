package nn

import (
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// Model is what a user writes to define a model of their own (a GPT, a
// residual MLP): a Go struct of its parts, layers and other models, with
// two methods.
//
//	type MLP struct{ d1, d2 *nn.DenseLayer }
//
//	func (m *MLP) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
//		return graph.AddSameShape(x, m.d2.Call(ctx, m.d1.Call(ctx, x, training), training))
//	}
//
//	func (m *MLP) Variables() []*nn.Variable { return nn.VariablesOf(m.d1, m.d2) }
//
// Call adds the model's nodes to the replica's graph; Variables lists every
// variable of its parts once, trainable or not (VariablesOf does that). Every
// layer and Sequential is a Model too. A part that takes other inputs
// (attention's query and key, an embedding's Attend) is a method with its own
// signature, called from Call; Layer is only what Sequential chains.
//
// The functions of this package that take a Model (TrainableVariables,
// SetTrainable, Summary, Predict, Evaluate; SaveCheckpoint and
// RestoreCheckpoint through VariableSource) also use these methods when the
// model has them:
//
//	Name() string                        // Summary's title and error messages
//	SetTrainable(trainable bool)         // SetTrainable
//	Summary() string                     // Summary
//
// They find them by a type assertion, never by reflection: lowercase fields
// are the natural spelling of a model's parts, and reflection cannot read
// them.
type Model interface {
	// Call returns the model's output for x. training selects training
	// behaviour for the parts that have one (dropout, batch norm).
	Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor
	// Variables returns the model's variables, each once, trainable or not;
	// the lazily built ones appear after the first Call (or Build).
	Variables() []*Variable
}

var (
	_ Model = (*Sequential)(nil)
	_ Model = Layer(nil)
)

// VariablesOf returns the variables of parts (layers, models, VariableLists)
// in order, each variable once: a weight two parts share (an embedding
// table used as the input lookup and as the tied output layer) is reported
// at its first place only, so an optimizer updates it once, with the sum of
// both uses' gradients, and a checkpoint saves it once. A model's
// Variables method is usually this call over its parts. It panics with an
// error wrapping ErrUsage if a part is nil.
func VariablesOf(parts ...VariableSource) []*Variable {
	var out []*Variable
	seen := make(map[*Variable]bool)
	for i, p := range parts {
		if p == nil {
			panic(usageError("VariablesOf: part %d is nil", i))
		}
		out = appendUnique(out, seen, p.Variables())
	}
	return out
}

// appendUnique appends the variables of vs not in seen and records them
// there; nil entries are kept, for the caller to report.
func appendUnique(out []*Variable, seen map[*Variable]bool, vs []*Variable) []*Variable {
	for _, v := range vs {
		if v != nil && seen[v] {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// TrainableVariables returns the trainable ones of m's variables, each once,
// in m's order: what a step hands to ctx.Gradients. Empty until the model is
// built.
func TrainableVariables(m VariableSource) []*Variable {
	if m == nil {
		panic(usageError("TrainableVariables: want a model, got nil"))
	}
	return trainable(VariablesOf(m))
}

// SetTrainable freezes (false) or unfreezes (true) m by calling its
// SetTrainable method: every layer and Sequential has one, and a model of
// one's own writes it by calling its parts' (keras: model.trainable). Call it
// between cells, not inside a step function; a step traced before the change
// retraces on its next Run. It panics with an error wrapping ErrUsage if m
// has no SetTrainable method: only the model knows which of its variables
// are weights and which are statistics that never train (batch norm's
// moving averages), and nn does not look inside it.
func SetTrainable(m Model, trainable bool) {
	if m == nil {
		panic(usageError("SetTrainable: want a model, got nil"))
	}
	st, ok := m.(interface{ SetTrainable(bool) })
	if !ok {
		panic(usageError("SetTrainable: %s has no SetTrainable method; give it one that calls its parts', "+
			"e.g. func (m *MLP) SetTrainable(t bool) { m.d1.SetTrainable(t); m.d2.SetTrainable(t) }", modelName(m)))
	}
	st.SetTrainable(trainable)
}

// modelName is m's Name if it has one, else its type ("MLP" for an *MLP).
func modelName(m Model) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	t := fmt.Sprintf("%T", m)
	return strings.TrimLeft(t[strings.LastIndex(t, ".")+1:], "*")
}

// Summary describes m as Keras's model.summary does. A model with a Summary
// method (Sequential: one row per layer) gives its own. Any other model has
// one row per variable, named by its path (block_0/attn/query/kernel), with
// its shape and size, then the totals, counting a shared weight once.
// Before the model is built it says so.
func Summary(m Model) string {
	if m == nil {
		panic(usageError("Summary: want a model, got nil"))
	}
	if s, ok := m.(interface{ Summary() string }); ok {
		return s.Summary()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Model: %q\n", modelName(m))
	const row = "%-40s %-16s %10s\n"
	rule := strings.Repeat("─", 68) + "\n"
	b.WriteString(rule)
	fmt.Fprintf(&b, row, "Variable", "Shape", "Param #")
	b.WriteString(rule)
	vars := VariablesOf(m)
	if len(vars) == 0 {
		b.WriteString("(no variables yet: they are made at the first Call)\n")
	}
	total, train := 0, 0
	for _, v := range vars {
		name := v.Name()
		if !v.Trainable() {
			name += " (non-trainable)"
		}
		fmt.Fprintf(&b, row, name, fmt.Sprint(v.Shape()), fmt.Sprint(v.Len()))
		total += v.Len()
		if v.Trainable() {
			train += v.Len()
		}
	}
	b.WriteString(rule)
	fmt.Fprintf(&b, "Total params: %d\nTrainable params: %d\nNon-trainable params: %d\n", total, train, total-train)
	return b.String()
}

// strategyFor returns the strategy m runs under: the one its layer or
// Sequential was created in, else the one its variables belong to (a model
// of one's own does not know where its parts were created), else the
// current one.
func strategyFor(m Model, method string) *strategy.Mirrored {
	if o, ok := m.(interface{ ownerStrategy() *strategy.Mirrored }); ok {
		if s := o.ownerStrategy(); s != nil {
			return s
		}
	}
	for _, v := range m.Variables() {
		if s := strategy.OwnerOf(v); s != nil {
			return s
		}
	}
	if s := strategy.Current(); s != nil {
		return s
	}
	if _, ok := m.(interface{ ownerStrategy() *strategy.Mirrored }); ok {
		panic(usageError("%s: %s: the model was created outside any strategy.Scope, so it has no strategy to run on; create it inside s.Scope(func() { ... })", modelName(m), method))
	}
	panic(usageError("%s: %s: the model has no variables yet to tell its strategy; train it first, or call %s inside s.Scope(func() { ... })", modelName(m), method, method))
}

// Build makes a model's variables for inputs of the given shape, batch axis
// first, without training it, as Keras's model.build does: it calls the
// model once, not training, on a placeholder of that shape in a graph of
// its own, with replica 0's context (strategy.Mirrored.BuildContext), so
// that its layers build. Call it inside the strategy's Scope,
// where the variables belong, before anything that reads them (a Generator,
// Summary, a checkpoint) comes before the first Run. A built model is left
// as it is. It panics as the model's Call does on a shape it refuses, and
// with an error wrapping ErrUsage outside any scope.
func Build(m Model, inputShape ...int) {
	if m == nil || len(inputShape) == 0 {
		panic(usageError("Build: want a model and an input shape, got %v and %v", m, inputShape))
	}
	s := strategy.Current()
	if s == nil {
		panic(usageError("Build: %s: call it inside the strategy's Scope, where its variables belong: s.Scope(func() { nn.Build(model, %s) })",
			modelName(m), strings.Join(strings.Fields(strings.Trim(fmt.Sprint(inputShape), "[]")), ", ")))
	}
	if l, ok := m.(Layer); ok {
		l.Build(inputShape)
		return
	}
	g := graph.New(s.DType())
	m.Call(s.BuildContext(g), g.Placeholder("build_input", inputShape...), false)
}
