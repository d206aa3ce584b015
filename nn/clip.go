package nn

import (
	"math"

	"github.com/gotrain/gotrain/internal/loops"
	"github.com/gotrain/gotrain/strategy"
)

// GlobalNorm returns the L2 norm of all the gradients together,
// √(Σᵢ‖gᵢ‖²), accumulated in float64 in the order of gs, each ‖gᵢ‖² by
// loops.SumSq (four lanes of independent additions, not one chain over
// every parameter).
func GlobalNorm(gs []strategy.Grad) float64 {
	var ss float64
	for _, g := range gs {
		if g.F32 != nil {
			ss += loops.SumSq(g.F32)
		} else {
			ss += loops.SumSq(g.F64)
		}
	}
	return math.Sqrt(ss)
}

// ClipByGlobalNorm scales every gradient in place by
// clipNorm/max(GlobalNorm(gs), clipNorm), as tf.clip_by_global_norm does, and
// returns the norm before clipping. Gradients whose norm is at most clipNorm
// are left unchanged. A non-finite norm (a NaN or Inf gradient) is returned
// and the gradients are left as they are, so the NaN shows in the weights
// instead of being hidden. It panics with an error wrapping ErrUsage if
// clipNorm ≤ 0.
func ClipByGlobalNorm(gs []strategy.Grad, clipNorm float64) float64 {
	if !(clipNorm > 0) {
		panic(usageError("ClipByGlobalNorm: want a norm > 0, got %g", clipNorm))
	}
	return clipGlobalNorm(gs, clipNorm)
}

func clipGlobalNorm(gs []strategy.Grad, clipNorm float64) float64 {
	norm := GlobalNorm(gs)
	if norm <= clipNorm || math.IsInf(norm, 0) || math.IsNaN(norm) {
		return norm
	}
	scale := clipNorm / norm
	for _, g := range gs {
		if g.F32 != nil {
			loops.ScaleTo(g.F32, float32(scale), g.F32)
		} else {
			loops.ScaleTo(g.F64, scale, g.F64)
		}
	}
	return norm
}
