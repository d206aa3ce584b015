package nn

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/errkind"
	"github.com/gotrain/gotrain/strategy"
)

// Layer is one stage of a model. Call adds the layer's nodes to the replica's
// graph, creating its variables on the first call (Build) once the input
// shape is known.
type Layer interface {
	// Name is unique within the strategy the layer was created under.
	Name() string
	// Call returns the layer's output for x. training selects training
	// behaviour for layers that have one (dropout, batch norm).
	Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor
	// Build creates the variables for inputs of the given shape (batch axis
	// first, any size). Calling it again does nothing.
	Build(inputShape []int)
	// Built reports whether Build has run.
	Built() bool
	// OutputShape returns the output shape for an input shape.
	OutputShape(inputShape []int) []int
	// Variables returns the layer's variables, trainable or not.
	Variables() []*Variable
	// TrainableVariables returns the variables gradients should update.
	TrainableVariables() []*Variable
	// SetTrainable freezes (false) or unfreezes (true) the layer's weights:
	// frozen weights leave TrainableVariables and get no update. Call it
	// between cells, not inside a step function; a step traced before the
	// change retraces on its next Run. Statistics and random state (batch
	// norm's moving averages, dropout's counter) are never trainable.
	SetTrainable(trainable bool)
	// Trainable reports whether the layer trains (the last SetTrainable;
	// true for a new layer).
	Trainable() bool
}

// LayerOption configures a layer constructor (Dense, Conv2D, MaxPool2D,
// BatchNormalization, ...). A layer given an option it has no use for panics
// with an error wrapping ErrUsage that names the option. An Activation is
// one too, so Dense takes its activation among its options:
// nn.Dense(512, nn.GELU, nn.WithoutBias(), nn.Named("up")). Activation is
// graph's type, which cannot carry a method of nn's, so the interface is
// the Stringer both have, and a constructor refuses, as misuse, any other
// value given as an option.
type LayerOption interface {
	String() string
}

// layerOption is one of nn's own LayerOptions: the call that made it and
// what it sets.
type layerOption struct {
	name string // the constructor, as layerConfig.set records it: "Named"
	args []any  // its arguments, for String
	set  func(*layerConfig)
}

// option returns the LayerOption name(args...) that applies set.
func option(name string, set func(*layerConfig), args ...any) layerOption {
	return layerOption{name: name, args: args, set: set}
}

// String returns the option as it was written: Named("up"), WithStrides(2, 2).
func (o layerOption) String() string {
	var b strings.Builder
	b.WriteString(o.name + "(")
	for i, a := range o.args {
		if i > 0 {
			b.WriteString(", ")
		}
		switch a.(type) {
		case string:
			fmt.Fprintf(&b, "%q", a)
		case Initializer:
			fmt.Fprintf(&b, "%#v", a)
		default:
			fmt.Fprint(&b, a)
		}
	}
	return b.String() + ")"
}

// layerConfig collects the options; set records which were given, in order.
type layerConfig struct {
	set      []string
	name     string
	noBias   bool
	act      Activation
	strideH  int
	strideW  int
	dilH     int // Conv2D, Conv1D: taps dilH rows, dilW columns apart
	dilW     int
	padding  Padding
	sync     bool
	momentum float64
	epsilon  float64
	seed     uint64
	causal   bool        // MultiHeadAttention: each position attends to earlier ones only
	rate     float64     // MultiHeadAttention: dropout on the attention weights
	init     Initializer // the kernel's initializer; nil: the layer's default
	rnn      recurrentConfig
}

func (c *layerConfig) mark(option string) { c.set = append(c.set, option) }

// apply runs opts and panics unless every option given is one of allowed.
func (c *layerConfig) apply(layer string, opts []LayerOption, allowed ...string) {
	for _, o := range opts {
		switch o := o.(type) {
		case nil:
			panic(usageError("%s: want an option, got nil", layer))
		case Activation:
			checkActivation(layer, o)
			c.mark("WithActivation")
			c.act = o
		case layerOption:
			c.mark(o.name)
			o.set(c)
		default:
			panic(usageError("%s: %v (%T) is not a layer option", layer, o, o))
		}
	}
	for _, name := range c.set {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			panic(usageError("%s: option %s does not apply; it takes %v", layer, name, allowed))
		}
	}
}

// count returns how many times option was given.
func (c *layerConfig) count(option string) int {
	n := 0
	for _, s := range c.set {
		if s == option {
			n++
		}
	}
	return n
}

func (c *layerConfig) has(option string) bool {
	for _, s := range c.set {
		if s == option {
			return true
		}
	}
	return false
}

// Named sets the layer's name instead of the generated one (dense, dense_1,
// conv2d, ...). The name prefixes its variables' names.
func Named(name string) LayerOption {
	return option("Named", func(c *layerConfig) { c.name = name }, name)
}

// WithoutBias drops the bias of Dense or Conv2D (for a layer followed by a
// normalization).
func WithoutBias() LayerOption {
	return option("WithoutBias", func(c *layerConfig) { c.noBias = true })
}

// WithActivation sets the activation of Conv2D (Linear by default).
func WithActivation(act Activation) LayerOption {
	checkActivation("WithActivation", act)
	return act
}

// WithStrides sets the strides of Conv2D (default 1, 1) or MaxPool2D
// (default the pool size). It panics if a stride is < 1.
func WithStrides(h, w int) LayerOption {
	if h < 1 || w < 1 {
		panic(usageError("WithStrides: want strides ≥ 1, got %d, %d", h, w))
	}
	return option("WithStrides", func(c *layerConfig) { c.strideH, c.strideW = h, w }, h, w)
}

// WithDilation sets the dilation of Conv2D (default 1, 1): the kernel's
// taps are h rows and w columns apart (Keras's dilation_rate). Conv1D takes
// WithDilation(1, d). It panics if a rate is < 1.
func WithDilation(h, w int) LayerOption {
	if h < 1 || w < 1 {
		panic(usageError("WithDilation: want dilation rates ≥ 1, got %d, %d", h, w))
	}
	return option("WithDilation", func(c *layerConfig) { c.dilH, c.dilW = h, w }, h, w)
}

// Padding selects how the convolution and pooling layers treat the image
// border: Valid (the default), Same or Causal.
type Padding = graph.Padding

const (
	// Valid uses only windows inside the image: out = ⌊(in-k)/s⌋ + 1.
	Valid = graph.Valid
	// Same pads so that out = ⌈in/s⌉, as TensorFlow does.
	Same = graph.Same
	// Causal pads before the input only, so that out = ⌈in/s⌉ and output t
	// sees inputs up to t·s: Keras's Conv1D padding="causal".
	Causal = graph.Causal
)

// WithPadding sets the padding of Conv2D, Conv1D or the pooling layers. It
// panics on an unknown padding.
func WithPadding(p Padding) LayerOption {
	if p != Valid && p != Same && p != Causal {
		panic(usageError("WithPadding: want Valid, Same or Causal, got %v", p))
	}
	return option("WithPadding", func(c *layerConfig) { c.padding = p }, p)
}

// layerBase is what every layer keeps: its name and whether it trains.
type layerBase struct {
	name   string
	frozen bool               // SetTrainable(false) was called last
	owner  *strategy.Mirrored // current when the layer was created; nil outside any scope
}

// newBase starts a layer named name under the current strategy.
func newBase(name string) layerBase { return layerBase{name: name, owner: strategy.Current()} }

// checkScope panics when the layer is being built outside any scope although
// it was created inside one: its variables would belong to no strategy, and
// Run would refuse them much later, blaming the creation.
func (l *layerBase) checkScope() {
	if l.owner != nil && strategy.Current() == nil {
		panic(usageError("%s: built after the strategy.Scope it was created in had ended, so its variables would belong to no strategy; "+
			"build it inside the scope (s.Scope(func() { nn.Build(model, shape...) })) or let its first call inside s.Run build it", l.name))
	}
}

// Name returns the layer's name.
func (l *layerBase) Name() string { return l.name }

// Trainable reports whether the layer trains.
func (l *layerBase) Trainable() bool { return !l.frozen }

// setTrainable records t and applies it to the layer's weights (nil
// entries, not built yet, are skipped; Build applies it when it creates them).
func (l *layerBase) setTrainable(t bool, weights ...*Variable) {
	l.frozen = !t
	for _, v := range weights {
		if v != nil {
			v.SetTrainable(t)
		}
	}
}

// checkAlloc panics with an error wrapping data.ErrMemory when weight name
// of the given shape, with its initial values (float64) and its storage,
// would not fit in the machine's memory: the runtime would end the process
// instead.
func (l *layerBase) checkAlloc(name string, shape []int) {
	if err := data.CheckAlloc(l.name+"/"+name, shape, 8+8); err != nil {
		panic(errkind.New(data.ErrMemory, "nn: ", "%s: %v", l.name, err))
	}
}

// newWeight creates a layer weight under the current strategy, trainable
// unless the layer is frozen.
func (l *layerBase) newWeight(name string, shape []int, init []float64) *Variable {
	l.checkScope()
	v := strategy.CreateVariable(l.name+"/"+name, shape, init)
	if l.frozen {
		v.SetTrainable(false)
	}
	return v
}

// newState creates a non-trainable variable: statistics, random state.
func (l *layerBase) newState(name string, shape []int, init []float64) *Variable {
	l.checkScope()
	v := strategy.CreateVariable(l.name+"/"+name, shape, init)
	v.SetTrainable(false)
	return v
}

// checkInput panics unless x is a tensor of the given rank (rank < 0: at
// least -rank).
func checkInput(layer string, x *Tensor, rank int, want string) []int {
	if x == nil {
		panic(usageError("%s: want an input tensor, got nil", layer))
	}
	shape := x.Shape()
	if (rank >= 0 && len(shape) != rank) || (rank < 0 && len(shape) < -rank) {
		panic(shapeError("%s: want input shape %s, got %v", layer, want, shape))
	}
	return shape
}

// initStream returns the random stream for a variable's initializer
// (strategy.InitStream with the current strategy's seed, 0 outside any
// scope).
func initStream(name string) *rand.Rand {
	var seed uint64
	if s := strategy.Current(); s != nil {
		seed = s.Seed()
	}
	return strategy.InitStream(seed, name)
}

// GlorotUniform returns fanIn·fanOut values drawn uniformly from ±√(6/(fanIn+fanOut))
// (Keras's default kernel initializer), from the stream for name.
func GlorotUniform(name string, fanIn, fanOut int) []float64 {
	return glorot(name, fanIn*fanOut, fanIn, fanOut)
}

func trainable(vs []*Variable) []*Variable {
	var out []*Variable
	for _, v := range vs {
		if v.Trainable() {
			out = append(out, v)
		}
	}
	return out
}

var (
	_ Layer     = (*DenseLayer)(nil)
	_ Layer     = (*Conv2DLayer)(nil)
	_ Layer     = (*MaxPool2DLayer)(nil)
	_ Layer     = (*AveragePooling2DLayer)(nil)
	_ Layer     = (*GlobalAveragePooling2DLayer)(nil)
	_ Layer     = (*Conv1DLayer)(nil)
	_ Layer     = (*FlattenLayer)(nil)
	_ Layer     = (*DropoutLayer)(nil)
	_ Layer     = (*BatchNormalizationLayer)(nil)
	_ Layer     = (*EmbeddingLayer)(nil)
	_ Layer     = (*PositionEmbeddingLayer)(nil)
	_ Layer     = (*ActivationLayer)(nil)
	_ Layer     = (*Sequential)(nil)
	_ Optimizer = (*SGD)(nil)
	_ Optimizer = (*Adam)(nil)
)
