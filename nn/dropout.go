package nn

import (
	"hash/fnv"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// DropoutLayer zeroes each input element with probability rate while
// training and scales the others by 1/(1-rate) (inverted dropout, keras
// layers.Dropout). Create it with Dropout.
//
// Masks come from a counter-based random stream (graph.DropoutMask) keyed by
// the layer's seed, the replica and a step counter: replica r at step t
// always draws the same mask, replicas draw independent masks, and nothing
// depends on scheduling. The counter is a non-trainable variable advanced
// once per step in which the layer trained, so a checkpoint of all variables
// restores the stream.
type DropoutLayer struct {
	layerBase
	rate float64
	drop dropState
}

// dropState is the random state of a layer that drops: DropoutLayer, and
// MultiHeadAttention's dropout on its attention weights.
type dropState struct {
	seed    uint64
	seeded  bool      // seed given by WithSeed, else derived in build
	counter *Variable // nil until built; [2], graph.CounterValue layout
}

// build creates the step counter (non-trainable, zeros) and fixes the seed
// from the strategy's seed and the layer's name unless WithSeed gave one.
func (d *dropState) build(l *layerBase) {
	if d.counter != nil {
		return
	}
	if !d.seeded {
		var base uint64
		if s := strategy.Current(); s != nil {
			base = s.Seed()
		}
		h := fnv.New64a()
		h.Write([]byte(l.name))
		d.seed = base ^ h.Sum64()
	}
	d.counter = l.newState("counter", []int{2}, nil)
}

// step returns the counter's node and the replica's stream. Inside
// strategy.Run it registers, through ctx.ApplyUpdate, the counter's advance
// after each step; outside it (ctx nil) the stream is replica 0's and the
// counter stays.
func (d *dropState) step(ctx *strategy.ReplicaContext, g *graph.Graph, name string) (counter *Tensor, stream uint64) {
	if ctx != nil {
		stream = uint64(ctx.ReplicaID())
		ctx.ApplyUpdate(strategy.Registration{Name: name, Update: counterAdvance{d.counter}})
	}
	return g.Var(d.counter), stream
}

// counterAdvance is the update that advances a random stream's counter
// once per step, so the next step draws other masks.
type counterAdvance struct{ counter *Variable }

func (u counterAdvance) Apply([]strategy.Grad) { graph.AdvanceCounter(u.counter) }

// WithSeed sets the seed of Dropout's random stream. Without it the seed
// comes from the strategy's seed and the layer's name, so two strategies
// with the same seed draw the same masks.
func WithSeed(seed uint64) LayerOption {
	return option("WithSeed", func(c *layerConfig) { c.seed = seed }, seed)
}

// Dropout returns a dropout layer dropping a fraction rate of its inputs,
// named dropout, dropout_1, ... Options: Named, WithSeed. It panics if rate
// is outside [0, 1) or on an option it does not take.
func Dropout(rate float64, opts ...LayerOption) *DropoutLayer {
	if !(rate >= 0 && rate < 1) {
		panic(usageError("Dropout: want a rate in [0, 1), got %v", rate))
	}
	var c layerConfig
	c.apply("Dropout", opts, "Named", "WithSeed")
	if c.name == "" {
		c.name = strategy.UniqueName("dropout")
	}
	return &DropoutLayer{layerBase: newBase(c.name), rate: rate, drop: dropState{seed: c.seed, seeded: c.has("WithSeed")}}
}

// Rate returns the fraction of inputs dropped while training.
func (l *DropoutLayer) Rate() float64 { return l.rate }

// Built reports whether the layer has its counter.
func (l *DropoutLayer) Built() bool { return l.drop.counter != nil }

// Build creates the step counter (non-trainable, zeros) and fixes the seed.
func (l *DropoutLayer) Build([]int) { l.drop.build(&l.layerBase) }

// Counter returns the variable holding the step counter, nil before Build.
func (l *DropoutLayer) Counter() *Variable { return l.drop.counter }

// Call returns x with dropout applied when training, x itself otherwise
// (and for rate 0). Inside strategy.Run the replica's ID selects its stream
// and the layer registers, through ctx.ApplyUpdate, the counter's advance
// after each step; outside it (ctx nil) the stream of replica 0 is used and
// the counter is not advanced.
func (l *DropoutLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	checkInput(l.name, x, -1, "[batch, ...]")
	l.Build(x.Shape())
	if !training || l.rate == 0 {
		return x
	}
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	counter, stream := l.drop.step(ctx, g, l.name)
	return graph.Dropout(x, counter, l.rate, l.drop.seed, stream)
}

// OutputShape returns the input shape.
func (l *DropoutLayer) OutputShape(in []int) []int { return append([]int(nil), in...) }

// Variables returns the counter (once built).
func (l *DropoutLayer) Variables() []*Variable { return nonNil(l.drop.counter) }

// TrainableVariables returns nil: the counter never trains.
func (l *DropoutLayer) TrainableVariables() []*Variable { return nil }

// SetTrainable records t; the layer has no weights.
func (l *DropoutLayer) SetTrainable(t bool) { l.setTrainable(t) }

// BUG(nn): A Dropout layer called twice in one step function draws the same
// mask both times (its stream depends on the replica and the step, not on the
// call) and advances its counter twice per step.
