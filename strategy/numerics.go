package strategy

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
)

// WithCheckNumerics makes every step check, on each replica before anything
// is applied, that the gradients the optimizers registered and the step's
// outputs (the loss) hold no NaN or Inf, as tf.debugging.enable_check_numerics
// does for TensorFlow (default on). A step that fails the check returns a
// *ReplicaError wrapping ErrNonFinite that names the replica and the first
// variable whose gradient is not finite (or the output), and changes no
// variable. The gradient of a dense layer's kernel that the replicas compute
// after the barrier (see the package doc) is checked through its operands,
// the layer's input and the gradient of its output, since a non-finite
// operand makes the product non-finite.
func WithCheckNumerics(on bool) Option { return func(c *config) { c.checkNumerics = on } }

// numCheck is one buffer a replica checks for NaN and Inf after its program
// ran: a gradient, or an operand of a deferred gradient product.
type numCheck struct {
	what string // the value, for the error: `gradient of "dense/kernel"`
	via  *graph.Node
	f32  []float32
	f64  []float64
}

// planChecks lists, for each replica, the buffers the numerics check scans,
// each buffer once: every registered gradient in update order, or for a
// deferred product its operands.
func planChecks(tr *trace) [][]numCheck {
	deferred := make(map[*graph.Node]bool)
	for _, parts := range tr.plan.parts {
		for _, p := range parts {
			for _, n := range p.prod {
				deferred[n] = true
			}
		}
	}
	checks := make([][]numCheck, len(tr.replicas))
	for r, rt := range tr.replicas {
		seen := make(map[*graph.Node]bool)
		add := func(what string, n, via *graph.Node) {
			if seen[n] {
				return
			}
			seen[n] = true
			checks[r] = append(checks[r], numCheck{what: what, via: via, f32: rt.prog.F32(n), f64: rt.prog.F64(n)})
		}
		for _, u := range rt.ctx.updates {
			for i, v := range u.Vars {
				what := fmt.Sprintf("gradient of %q", v.Name())
				gn := u.Grads[i]
				if !deferred[gn] {
					add(what, gn, nil)
					continue
				}
				for _, in := range gn.Inputs() {
					add(what, in, in)
				}
			}
		}
	}
	return checks
}

// checkNumerics returns an error wrapping ErrNonFinite for the first buffer
// of replica r, or the first step output, that holds NaN or Inf.
func (tr *trace) checkNumerics(r int, vals [][]data.Tensor) error {
	for _, c := range tr.checks[r] {
		i, v := nonFinite32(c.f32), 0.0
		if c.f32 != nil {
			if i >= 0 {
				v = float64(c.f32[i])
			}
		} else if i = nonFinite64(c.f64); i >= 0 {
			v = c.f64[i]
		}
		if i < 0 {
			continue
		}
		if c.via != nil {
			return &wrapped{kind: ErrNonFinite, msg: fmt.Sprintf("%s is not finite: its operand %v holds %v at element %d", c.what, c.via, v, i)}
		}
		return &wrapped{kind: ErrNonFinite, msg: fmt.Sprintf("%s holds %v at element %d", c.what, v, i)}
	}
	for k := range vals {
		x := vals[k][r].Data
		if i := nonFinite64(x); i >= 0 {
			name := fmt.Sprintf("step output %d", k)
			if tr.result.names != nil {
				name = fmt.Sprintf("step output %q", tr.result.names[k])
			}
			return &wrapped{kind: ErrNonFinite, msg: fmt.Sprintf("%s holds %v at element %d", name, x[i], i)}
		}
	}
	return nil
}

// nonFinite32 returns the index of the first NaN or Inf in x, or -1. It
// reads two values at a time as one word: a float32 is NaN or Inf when its
// eight exponent bits are all set, and adding 1 to that exponent field (bit
// 23) carries into the lane's top bit only then, so the OR of every
// (bits&exponents)+carry has a top bit set if and only if some value is not
// finite. Keep in sync with nonFinite64.
func nonFinite32(x []float32) int {
	const exp, one, top = 0x7f800000_7f800000, 0x00800000_00800000, 0x80000000_80000000
	i := 0
	if len(x) > 0 && uintptr(unsafe.Pointer(&x[0]))%8 != 0 {
		i = 1 // x[0] is checked below with the rest
	}
	var a0, a1, a2, a3 uint64
	if n := (len(x) - i) / 2; n > 0 {
		w := unsafe.Slice((*uint64)(unsafe.Pointer(&x[i])), n)
		j := 0
		for ; j+4 <= len(w); j += 4 {
			a0 |= w[j]&exp + one
			a1 |= w[j+1]&exp + one
			a2 |= w[j+2]&exp + one
			a3 |= w[j+3]&exp + one
		}
		for ; j < len(w); j++ {
			a0 |= w[j]&exp + one
		}
	}
	if (a0|a1|a2|a3)&top == 0 && finite32(x[:i]) && finite32(x[i+(len(x)-i)/2*2:]) {
		return -1
	}
	for k, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return k
		}
	}
	return -1
}

func finite32(x []float32) bool {
	for _, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// nonFinite64 is nonFinite32 for float64 values, one to a word. Keep in sync
// with nonFinite32.
func nonFinite64(x []float64) int {
	const exp, one, top = 0x7ff0000000000000, 0x0010000000000000, 0x8000000000000000
	var a0, a1, a2, a3 uint64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		a0 |= math.Float64bits(x[j])&exp + one
		a1 |= math.Float64bits(x[j+1])&exp + one
		a2 |= math.Float64bits(x[j+2])&exp + one
		a3 |= math.Float64bits(x[j+3])&exp + one
	}
	for ; j < len(x); j++ {
		a0 |= math.Float64bits(x[j])&exp + one
	}
	if (a0|a1|a2|a3)&top == 0 {
		return -1
	}
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return k
		}
	}
	return -1
}
