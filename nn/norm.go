package nn

import (
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/strategy"
)

// NormLayer normalizes each row of its input over the last axis: layer
// normalization (keras layers.LayerNormalization, torch nn.LayerNorm),
//
//	(x - mean) / sqrt(var + ε) · gamma + beta,
//
// or RMS normalization (keras layers.RMSNormalization, torch nn.RMSNorm),
//
//	x / sqrt(mean(x²) + ε) · gamma.
//
// The statistics are each row's own, so the layer behaves the same in
// training and inference and across replicas. Create it with
// LayerNormalization or RMSNormalization.
type NormLayer struct {
	layerBase
	rms     bool
	epsilon float64
	useB    bool
	gamma   *Variable // nil until built
	beta    *Variable // nil until built, and for RMS or WithoutBias
}

// NormEpsilon sets the ε added to the variance of LayerNormalization
// (default 1e-3, Keras's; PyTorch uses 1e-5) or RMSNormalization (default
// 1e-6). It panics if eps ≤ 0.
func NormEpsilon(eps float64) LayerOption {
	if !(eps > 0) {
		panic(usageError("NormEpsilon: want ε > 0, got %v", eps))
	}
	return option("NormEpsilon", func(c *layerConfig) { c.epsilon = eps }, eps)
}

// LayerNormalization returns a layer normalization over the last axis with
// a learned scale (gamma, ones) and offset (beta, zeros), named
// layer_normalization, layer_normalization_1, ... Options: Named,
// NormEpsilon, WithoutBias (no beta, as Keras's center=False or PyTorch's
// bias=False). It panics on an option it does not take.
func LayerNormalization(opts ...LayerOption) *NormLayer {
	c := layerConfig{epsilon: 1e-3}
	c.apply("LayerNormalization", opts, "Named", "NormEpsilon", "WithoutBias")
	if c.name == "" {
		c.name = strategy.UniqueName("layer_normalization")
	}
	return &NormLayer{layerBase: newBase(c.name), epsilon: c.epsilon, useB: !c.noBias}
}

// RMSNormalization returns an RMS normalization over the last axis with a
// learned scale (gamma, ones), named rms_normalization, ... Options: Named,
// NormEpsilon. It panics on an option it does not take.
func RMSNormalization(opts ...LayerOption) *NormLayer {
	c := layerConfig{epsilon: 1e-6}
	c.apply("RMSNormalization", opts, "Named", "NormEpsilon")
	if c.name == "" {
		c.name = strategy.UniqueName("rms_normalization")
	}
	return &NormLayer{layerBase: newBase(c.name), rms: true, epsilon: c.epsilon}
}

// Epsilon returns the ε added to the variance (or mean square).
func (l *NormLayer) Epsilon() float64 { return l.epsilon }

// Built reports whether the layer has its variables.
func (l *NormLayer) Built() bool { return l.gamma != nil }

// Build creates gamma (ones) and, for layer normalization with a bias,
// beta (zeros), of the width of the input's last axis. It panics unless the
// input has a last axis of width ≥ 1.
func (l *NormLayer) Build(inputShape []int) {
	if l.Built() {
		return
	}
	if len(inputShape) < 1 || inputShape[len(inputShape)-1] < 1 {
		panic(shapeError("%s: want input shape [..., width], got %v", l.name, inputShape))
	}
	c := inputShape[len(inputShape)-1]
	ones := make([]float64, c)
	for i := range ones {
		ones[i] = 1
	}
	l.gamma = l.newWeight("gamma", []int{c}, ones)
	if l.useB && !l.rms {
		l.beta = l.newWeight("beta", []int{c}, nil)
	}
}

// OutputShape returns the input shape.
func (l *NormLayer) OutputShape(in []int) []int { return append([]int(nil), in...) }

// Call normalizes each row of x over its last axis, building the layer on
// the first call. It panics with an error wrapping ErrShape, naming the
// layer, if x's last axis differs from the one it was built for.
func (l *NormLayer) Call(ctx *strategy.ReplicaContext, x *Tensor, training bool) *Tensor {
	shape := checkInput(l.name, x, -1, "[..., width]")
	l.Build(shape)
	if c, want := shape[len(shape)-1], l.gamma.Len(); c != want {
		panic(shapeError("%s: want a last axis of width %d, got %v", l.name, want, shape))
	}
	g := graphOf(ctx, x)
	restore := g.SetScope(l.name)
	defer restore()
	gamma := g.Var(l.gamma)
	if l.rms {
		return graph.RMSNorm(x, gamma, l.epsilon)
	}
	var beta *Tensor
	if l.beta != nil {
		beta = g.Var(l.beta)
	}
	return graph.LayerNorm(x, gamma, beta, l.epsilon)
}

// Variables returns gamma and beta (once built).
func (l *NormLayer) Variables() []*Variable { return nonNil(l.gamma, l.beta) }

// TrainableVariables returns the trainable ones of Variables.
func (l *NormLayer) TrainableVariables() []*Variable { return trainable(l.Variables()) }

// SetTrainable freezes or unfreezes gamma and beta.
func (l *NormLayer) SetTrainable(t bool) { l.setTrainable(t, l.gamma, l.beta) }
