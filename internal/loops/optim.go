package loops

import (
	"math"
	"strconv"
)

// AdamUpdate applies one step of Adam (Kingma & Ba) exactly as PyTorch's
// torch.optim.Adam (amsgrad=False, weight_decay=0) computes it:
//
//	m = β₁·m + (1-β₁)·g
//	v = β₂·v + (1-β₂)·g²
//	w -= lr/(1-β₁ᵗ) · m / (√v/√(1-β₂ᵗ) + ε)
//
// with t = step (1 for the first update). The bias corrections are folded
// into the step size, α = lr·√(1-β₂ᵗ)/(1-β₁ᵗ), and ε is scaled to
// ε̂ = ε·√(1-β₂ᵗ), so each element costs one square root and one division:
//
//	for i := range w {
//		m[i] = beta1*m[i] + (1-beta1)*g[i]
//		v[i] = beta2*v[i] + (1-beta2)*g[i]*g[i]
//		w[i] -= α * m[i] / (sqrt(v[i]) + ε̂)
//	}
//
// which equals PyTorch's formula algebraically. (TensorFlow's Adam adds its
// ε unscaled, ε̂ = ε; the difference matters only when √v is near ε.)
// The arithmetic is done in T. It panics if step < 1.
//
// Long buffers are split among GOMAXPROCS goroutines; each element's
// arithmetic is the same whatever the split, so the result is too.
func AdamUpdate[T Float](w, g, m, v []T, lr, beta1, beta2, eps float64, step int) {
	alpha, epsHat := adamStepSize(lr, beta1, beta2, eps, step)
	if serial(len(w)) {
		adam(w, g, m, v, T(beta1), T(beta2), T(alpha), T(epsHat), 1)
		return
	}
	parallel(len(w), func(lo, hi int) {
		adam(w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], T(beta1), T(beta2), T(alpha), T(epsHat), 1)
	})
}

// AdamWUpdate applies one step of AdamW (Loshchilov & Hutter) as PyTorch's
// torch.optim.AdamW does: decoupled weight decay first, then the Adam step of
// AdamUpdate:
//
//	w[i] *= 1 - lr*weightDecay
//	... AdamUpdate's loop body ...
//
// It panics if step < 1.
func AdamWUpdate[T Float](w, g, m, v []T, lr, beta1, beta2, eps, weightDecay float64, step int) {
	alpha, epsHat := adamStepSize(lr, beta1, beta2, eps, step)
	if serial(len(w)) {
		adam(w, g, m, v, T(beta1), T(beta2), T(alpha), T(epsHat), T(1-lr*weightDecay))
		return
	}
	parallel(len(w), func(lo, hi int) {
		adam(w[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], T(beta1), T(beta2), T(alpha), T(epsHat), T(1-lr*weightDecay))
	})
}

func adamStepSize(lr, beta1, beta2, eps float64, step int) (alpha, epsHat float64) {
	if step < 1 {
		panic(errStep(step))
	}
	t := float64(step)
	bc1 := 1 - math.Pow(beta1, t)
	sbc2 := math.Sqrt(1 - math.Pow(beta2, t))
	return lr * sbc2 / bc1, eps * sbc2
}

type errStep int

func (e errStep) Error() string {
	return "kernels: adam: want step ≥ 1, got " + strconv.Itoa(int(e))
}

// useVector enables assembly loops where the build has them; tests turn it
// off to compare the two.
var useVector = true

// adamConsts are the per-step constants of the Adam loop, in the order the
// assembly loads them and the device kernel reads them (adamSource in
// optim_cuda.go).
type adamConsts[T Float] struct {
	b1, c1, b2, c2, alpha, epsHat, decay T
}

// newAdamConsts computes the constants in T, as both the CPU loop and
// AdamUpdateDevice use them: 1-β is rounded from β in T, not from the
// float64 β, and the device must see the same bits.
func newAdamConsts[T Float](b1, b2, alpha, epsHat, decay T) adamConsts[T] {
	return adamConsts[T]{b1, 1 - b1, b2, 1 - b2, alpha, epsHat, decay}
}

// adam is the fused loop of AdamUpdate and AdamWUpdate; decay is 1 for Adam.
// On amd64 with AVX a vector loop computes a prefix with the same operations
// in the same order (keep in sync with adam_amd64.s), and this loop the rest.
// The device kernel (adamSource in optim_cuda.go) computes the same
// expressions in the same order; keep in sync.
func adam[T Float](w, g, m, v []T, b1, b2, alpha, epsHat, decay T) {
	g, m, v = g[:len(w)], m[:len(w)], v[:len(w)]
	k := newAdamConsts(b1, b2, alpha, epsHat, decay)
	done := 0
	if useVector {
		done = adamVector(w, g, m, v, &k)
	}
	w, g, m, v = w[done:], g[done:], m[done:], v[done:]
	for i, gi := range g {
		mi := k.b1*m[i] + k.c1*gi
		vi := k.b2*v[i] + k.c2*gi*gi
		m[i], v[i] = mi, vi
		w[i] = k.decay*w[i] - k.alpha*mi/(T(math.Sqrt(float64(vi)))+k.epsHat)
	}
}

// SGDUpdate applies one step of stochastic gradient descent with optional
// momentum, as PyTorch's torch.optim.SGD does (dampening 0, no weight decay):
//
//	for i := range w {
//		d := g[i]
//		if momentum != 0 {
//			vel[i] = momentum*vel[i] + g[i]
//			if nesterov { d = g[i] + momentum*vel[i] } else { d = vel[i] }
//		}
//		w[i] -= lr * d
//	}
//
// vel starts at zero, which makes the first step vel = g as in PyTorch. With
// a constant learning rate this is the same trajectory as Keras's SGD, whose
// velocity is -lr times ours. vel may be nil when momentum is 0.
//
// Long buffers are split among goroutines, as in AdamUpdate.
func SGDUpdate[T Float](w, g, vel []T, lr, momentum float64, nesterov bool) {
	if serial(len(w)) {
		sgd(w, g, vel, lr, momentum, nesterov)
		return
	}
	parallel(len(w), func(lo, hi int) { sgd(w[lo:hi], g[lo:hi], part(vel, lo, hi), lr, momentum, nesterov) })
}

// part returns x[lo:hi], or nil for an absent (nil) slot.
func part[T Float](x []T, lo, hi int) []T {
	if x == nil {
		return nil
	}
	return x[lo:hi]
}

// sgd is SGDUpdate's loop. The device kernel (sgdSource in optim_cuda.go)
// computes the same expressions in the same order, with the same constants
// T(lr) and T(momentum); keep in sync.
func sgd[T Float](w, g, vel []T, lr, momentum float64, nesterov bool) {
	g = g[:len(w)]
	a := T(lr)
	if momentum == 0 {
		for i, gi := range g {
			w[i] -= a * gi
		}
		return
	}
	mu := T(momentum)
	vel = vel[:len(w)]
	if nesterov {
		for i, gi := range g {
			vi := mu*vel[i] + gi
			vel[i] = vi
			w[i] -= a * (gi + mu*vi)
		}
		return
	}
	for i, gi := range g {
		vi := mu*vel[i] + gi
		vel[i] = vi
		w[i] -= a * vi
	}
}

// RMSpropUpdate applies one step of RMSprop as PyTorch's torch.optim.RMSprop
// (centered=False) and Keras's RMSprop do:
//
//	for i := range w {
//		ms[i] = rho*ms[i] + (1-rho)*g[i]*g[i]
//		d := g[i] / (sqrt(ms[i]) + eps)
//		if momentum != 0 {
//			mom[i] = momentum*mom[i] + d
//			d = mom[i]
//		}
//		w[i] -= lr * d
//	}
//
// mom may be nil when momentum is 0. (PyTorch calls rho alpha.)
//
// Long buffers are split among goroutines, as in AdamUpdate.
func RMSpropUpdate[T Float](w, g, ms, mom []T, lr, rho, eps, momentum float64) {
	if serial(len(w)) {
		rmsprop(w, g, ms, mom, lr, rho, eps, momentum)
		return
	}
	parallel(len(w), func(lo, hi int) { rmsprop(w[lo:hi], g[lo:hi], ms[lo:hi], part(mom, lo, hi), lr, rho, eps, momentum) })
}

// rmspropConsts are the per-step constants of the RMSprop loop, in the
// order the device kernel reads them (rmspropSource in optim_cuda.go).
type rmspropConsts[T Float] struct {
	lr, rho, c, eps, mu T
}

// newRMSpropConsts computes the constants in T, as both the CPU loop and
// RMSpropUpdateDevice use them: unlike Adam's, 1-ρ is rounded from the
// float64 ρ, and the device must see the same bits.
func newRMSpropConsts[T Float](lr, rho, eps, momentum float64) rmspropConsts[T] {
	return rmspropConsts[T]{T(lr), T(rho), T(1 - rho), T(eps), T(momentum)}
}

// rmsprop is RMSpropUpdate's loop. The device kernel (rmspropSource in
// optim_cuda.go) computes the same expressions in the same order; keep in
// sync.
func rmsprop[T Float](w, g, ms, mom []T, lr, rho, eps, momentum float64) {
	g, ms = g[:len(w)], ms[:len(w)]
	k := newRMSpropConsts[T](lr, rho, eps, momentum)
	a, r, c, e := k.lr, k.rho, k.c, k.eps
	if momentum == 0 {
		for i, gi := range g {
			s := r*ms[i] + c*gi*gi
			ms[i] = s
			w[i] -= a * gi / (T(math.Sqrt(float64(s))) + e)
		}
		return
	}
	mu := k.mu
	mom = mom[:len(w)]
	for i, gi := range g {
		s := r*ms[i] + c*gi*gi
		ms[i] = s
		d := mu*mom[i] + gi/(T(math.Sqrt(float64(s)))+e)
		mom[i] = d
		w[i] -= a * d
	}
}
