package loops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// sizes covers the serial path, chunk edges and the parallel path, plus a
// few seeded random sizes in [1, 1e5].
var sizes = func() []int {
	s := []int{1, 2, 3, 7, 63, 64, 65, 1000, 16383, 16384, 16385, 32767, 32768, 40001, 100000}
	r := rand.New(rand.NewPCG(17, 18))
	for range 4 {
		s = append(s, 1+r.IntN(100000))
	}
	return s
}()

const guard = 5

// guarded returns a slice of n random values with NaN guard regions on both
// sides, and the full backing slice to check the guards with.
func guarded[T loops.Float](r *rand.Rand, n int) (s, full []T) {
	full = make([]T, n+2*guard)
	for i := range full {
		full[i] = T(math.NaN())
	}
	s = full[guard : guard+n : guard+n]
	for i := range s {
		s[i] = T(r.NormFloat64())
	}
	return s, full
}

func checkGuards[T loops.Float](t *testing.T, name string, full []T) {
	t.Helper()
	n := len(full) - 2*guard
	for i := 0; i < guard; i++ {
		if !math.IsNaN(float64(full[i])) || !math.IsNaN(float64(full[guard+n+i])) {
			t.Fatalf("%s: guard region overwritten", name)
		}
	}
}

func clone[T any](s []T) []T { return append([]T(nil), s...) }

// close reports whether got is within an absolute-or-relative tol of want,
// NaN equal to NaN.
func close(got, want, tol float64) bool {
	if math.IsNaN(got) || math.IsNaN(want) {
		return math.IsNaN(got) && math.IsNaN(want)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestAllReduceSum(t *testing.T) {
	testAllReduceSum[float32](t)
	testAllReduceSum[float64](t)
}

func testAllReduceSum[T loops.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, replicas := range []int{1, 2, 3, 4, 5} {
		for _, n := range sizes {
			name := fmt.Sprintf("%T/replicas=%d/n=%d", T(0), replicas, n)
			bufs := make([][]T, replicas)
			fulls := make([][]T, replicas)
			for i := range bufs {
				bufs[i], fulls[i] = guarded[T](r, n)
			}
			want := make([]T, n)
			for i := range want {
				s := bufs[0][i]
				for r := 1; r < replicas; r++ {
					s += bufs[r][i]
				}
				want[i] = s
			}
			loops.AllReduceSum(bufs)
			for rep := range bufs {
				checkGuards(t, name, fulls[rep])
				for i := range want {
					// Same order of additions as the reference: bit-identical.
					if bufs[rep][i] != want[i] {
						t.Fatalf("%s: bufs[%d][%d] = %v, want %v", name, rep, i, bufs[rep][i], want[i])
					}
				}
			}
		}
	}
}

func TestSumTo(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range sizes {
		for _, k := range []int{0, 1, 3} {
			srcs := make([][]float64, k)
			for i := range srcs {
				srcs[i], _ = guarded[float64](r, n)
			}
			dst, full := guarded[float64](r, n)
			loops.SumTo(dst, srcs...)
			checkGuards(t, "SumTo", full)
			for i := range dst {
				var want float64
				if k > 0 {
					want = srcs[0][i]
					for _, s := range srcs[1:] {
						want += s[i]
					}
				}
				if dst[i] != want {
					t.Fatalf("SumTo n=%d k=%d: dst[%d] = %v, want %v", n, k, i, dst[i], want)
				}
			}
		}
	}
}

func TestVectorKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		name string
		run  func(dst, x, y []float64)
		ref  func(x, y float64) float64
	}{
		{"ScaleTo", func(d, x, _ []float64) { loops.ScaleTo(d, 1.5, x) }, func(x, _ float64) float64 { return 1.5 * x }},
		{"AddTo", func(d, x, y []float64) { loops.AddTo(d, x, y) }, func(x, y float64) float64 { return x + y }},
		{"AxpyTo", func(d, x, y []float64) { loops.AxpyTo(d, -0.5, x, y) }, func(x, y float64) float64 { return -0.5*x + y }},
	}
	for _, tt := range tests {
		for _, n := range sizes {
			x, _ := guarded[float64](r, n)
			y, _ := guarded[float64](r, n)
			dst, full := guarded[float64](r, n)
			tt.run(dst, x, y)
			checkGuards(t, tt.name, full)
			for i := range dst {
				if want := tt.ref(x[i], y[i]); dst[i] != want {
					t.Fatalf("%s n=%d: dst[%d] = %v, want %v (x=%v y=%v)", tt.name, n, i, dst[i], want, x[i], y[i])
				}
			}
		}
	}
}

func TestReductions(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range sizes {
		x, _ := guarded[float32](r, n)
		y, _ := guarded[float32](r, n)
		var dot, sq, sum float64
		for i := range x {
			dot += float64(x[i]) * float64(y[i])
			sq += float64(x[i]) * float64(x[i])
			sum += float64(x[i])
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"Dot", loops.Dot(x, y), dot},
			{"SumSq", loops.SumSq(x), sq},
			{"Sum", loops.Sum(x), sum},
		} {
			if !close(c.got, c.want, 1e-12) {
				t.Errorf("%s n=%d = %v, want %v", c.name, n, c.got, c.want)
			}
		}
	}
}

// naiveAdam is PyTorch's Adam step written as torch.optim.Adam does it,
// without folding the bias corrections: the reference AdamUpdate must match.
func naiveAdam(w, g, m, v []float64, lr, b1, b2, eps, wd float64, step int) {
	bc1 := 1 - math.Pow(b1, float64(step))
	bc2 := 1 - math.Pow(b2, float64(step))
	for i := range w {
		w[i] *= 1 - lr*wd
		m[i] = b1*m[i] + (1-b1)*g[i]
		v[i] = b2*v[i] + (1-b2)*g[i]*g[i]
		denom := math.Sqrt(v[i])/math.Sqrt(bc2) + eps
		w[i] -= lr / bc1 * m[i] / denom
	}
}

func naiveSGD(w, g, vel []float64, lr, mu float64, nesterov bool) {
	for i := range w {
		d := g[i]
		if mu != 0 {
			vel[i] = mu*vel[i] + g[i]
			if nesterov {
				d = g[i] + mu*vel[i]
			} else {
				d = vel[i]
			}
		}
		w[i] -= lr * d
	}
}

func naiveRMSprop(w, g, ms, mom []float64, lr, rho, eps, mu float64) {
	for i := range w {
		ms[i] = rho*ms[i] + (1-rho)*g[i]*g[i]
		d := g[i] / (math.Sqrt(ms[i]) + eps)
		if mu != 0 {
			mom[i] = mu*mom[i] + d
			d = mom[i]
		}
		w[i] -= lr * d
	}
}

func TestOptimizers(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	type state struct{ w, g, s1, s2 []float64 }
	tests := []struct {
		name string
		tol  float64
		run  func(st state, step int) // the kernel, on guarded slices
		ref  func(st state, step int)
	}{
		{"Adam", 1e-12,
			func(st state, k int) { loops.AdamUpdate(st.w, st.g, st.s1, st.s2, 1e-3, 0.9, 0.999, 1e-8, k) },
			func(st state, k int) { naiveAdam(st.w, st.g, st.s1, st.s2, 1e-3, 0.9, 0.999, 1e-8, 0, k) }},
		{"Adam-big-eps", 1e-12,
			func(st state, k int) { loops.AdamUpdate(st.w, st.g, st.s1, st.s2, 0.1, 0.5, 0.9, 0.3, k) },
			func(st state, k int) { naiveAdam(st.w, st.g, st.s1, st.s2, 0.1, 0.5, 0.9, 0.3, 0, k) }},
		{"AdamW", 1e-12,
			func(st state, k int) { loops.AdamWUpdate(st.w, st.g, st.s1, st.s2, 1e-2, 0.9, 0.999, 1e-8, 0.01, k) },
			func(st state, k int) { naiveAdam(st.w, st.g, st.s1, st.s2, 1e-2, 0.9, 0.999, 1e-8, 0.01, k) }},
		{"SGD", 0,
			func(st state, _ int) { loops.SGDUpdate(st.w, st.g, nil, 0.1, 0, false) },
			func(st state, _ int) { naiveSGD(st.w, st.g, nil, 0.1, 0, false) }},
		{"SGD-momentum", 1e-15,
			func(st state, _ int) { loops.SGDUpdate(st.w, st.g, st.s1, 0.1, 0.9, false) },
			func(st state, _ int) { naiveSGD(st.w, st.g, st.s1, 0.1, 0.9, false) }},
		{"SGD-nesterov", 1e-15,
			func(st state, _ int) { loops.SGDUpdate(st.w, st.g, st.s1, 0.1, 0.9, true) },
			func(st state, _ int) { naiveSGD(st.w, st.g, st.s1, 0.1, 0.9, true) }},
		{"RMSprop", 1e-13,
			func(st state, _ int) { loops.RMSpropUpdate(st.w, st.g, st.s1, nil, 1e-3, 0.9, 1e-7, 0) },
			func(st state, _ int) { naiveRMSprop(st.w, st.g, st.s1, nil, 1e-3, 0.9, 1e-7, 0) }},
		{"RMSprop-momentum", 1e-13,
			func(st state, _ int) { loops.RMSpropUpdate(st.w, st.g, st.s1, st.s2, 1e-3, 0.9, 1e-7, 0.5) },
			func(st state, _ int) { naiveRMSprop(st.w, st.g, st.s1, st.s2, 1e-3, 0.9, 1e-7, 0.5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []int{1, 3, 64, 1001, 100000} {
				var got, want state
				var fulls [4][]float64
				got.w, fulls[0] = guarded[float64](r, n)
				got.g, fulls[1] = guarded[float64](r, n)
				got.s1, fulls[2] = guarded[float64](r, n)
				got.s2, fulls[3] = guarded[float64](r, n)
				for i := range got.s2 {
					got.s1[i] = 0
					got.s2[i] = 0
				}
				want = state{clone(got.w), clone(got.g), clone(got.s1), clone(got.s2)}
				for step := 1; step <= 3; step++ {
					tt.run(got, step)
					tt.ref(want, step)
				}
				for _, f := range fulls {
					checkGuards(t, tt.name, f)
				}
				for i := range want.w {
					if !close(got.w[i], want.w[i], tt.tol) || !close(got.s1[i], want.s1[i], tt.tol) {
						t.Fatalf("n=%d: w[%d] = %v, s1 = %v; want %v, %v", n, i, got.w[i], got.s1[i], want.w[i], want.s1[i])
					}
				}
			}
		})
	}
}

func TestAdamFloat32(t *testing.T) {
	// float32 state stays within float32 rounding of the float64 reference.
	r := rand.New(rand.NewPCG(13, 14))
	const n = 1000
	w64, _ := guarded[float64](r, n)
	g64, _ := guarded[float64](r, n)
	m64, v64 := make([]float64, n), make([]float64, n)
	w32, g32 := make([]float32, n), make([]float32, n)
	for i := range w64 {
		w32[i], g32[i] = float32(w64[i]), float32(g64[i])
		w64[i], g64[i] = float64(w32[i]), float64(g32[i])
	}
	m32, v32 := make([]float32, n), make([]float32, n)
	for step := 1; step <= 5; step++ {
		loops.AdamUpdate(w32, g32, m32, v32, 1e-3, 0.9, 0.999, 1e-8, step)
		naiveAdam(w64, g64, m64, v64, 1e-3, 0.9, 0.999, 1e-8, 0, step)
	}
	for i := range w64 {
		if !close(float64(w32[i]), w64[i], 1e-6) {
			t.Fatalf("w[%d] = %v, want %v", i, w32[i], w64[i])
		}
	}
}

func TestAdamStepPanics(t *testing.T) {
	defer func() {
		err, ok := recover().(error)
		if !ok || err.Error() != "kernels: adam: want step ≥ 1, got 0" {
			t.Errorf("AdamUpdate(step 0) panicked with %v", err)
		}
	}()
	loops.AdamUpdate([]float64{1}, []float64{1}, []float64{0}, []float64{0}, 1e-3, 0.9, 0.999, 1e-8, 0)
}

// goLoops runs fn with the assembly loops off, so kernels run their Go
// loops: the reference the assembly must match bit for bit.
func goLoops(fn func()) {
	defer loops.SetUseVector(loops.SetUseVector(false))
	fn()
}

// TestAdamVectorMatchesGo checks the assembly loop gives the same bits as
// the Go loop, remainders included.
func TestAdamVectorMatchesGo(t *testing.T) {
	testAdamVector[float32](t)
	testAdamVector[float64](t)
}

func testAdamVector[T loops.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for n := 1; n <= 67; n++ {
		w, _ := guarded[T](r, n)
		g, _ := guarded[T](r, n)
		m, _ := guarded[T](r, n)
		v, _ := guarded[T](r, n)
		for i := range v {
			v[i] *= v[i]
		}
		w2, g2, m2, v2 := clone(w), clone(g), clone(m), clone(v)
		loops.AdamWUpdate(w, g, m, v, 1e-2, 0.9, 0.999, 1e-8, 0.1, 3)
		goLoops(func() { loops.AdamWUpdate(w2, g2, m2, v2, 1e-2, 0.9, 0.999, 1e-8, 0.1, 3) })
		for i := range w {
			if w[i] != w2[i] || m[i] != m2[i] || v[i] != v2[i] {
				t.Fatalf("%T n=%d: [%d] vector w,m,v = %v,%v,%v; Go loop %v,%v,%v", T(0), n, i, w[i], m[i], v[i], w2[i], m2[i], v2[i])
			}
		}
	}
}

// TestArithVectorMatchesGo checks AddTo's, SubTo's, MulTo's and DivTo's
// assembly loops against their Go loops and the loops in their doc
// comments, bit for bit, remainders, the guards around dst, a dst that is a,
// and signed zeros, infinities, NaN and subnormals included.
func TestArithVectorMatchesGo(t *testing.T) {
	testArithVector[float32](t)
	testArithVector[float64](t)
}

func testArithVector[T loops.Float](t *testing.T) {
	for _, op := range []struct {
		name string
		run  func(dst, a, b []T)
		ref  func(a, b T) T
	}{
		{"AddTo", loops.AddTo[T], func(a, b T) T { return a + b }},
		{"SubTo", loops.SubTo[T], func(a, b T) T { return a - b }},
		{"MulTo", loops.MulTo[T], func(a, b T) T { return a * b }},
		{"DivTo", loops.DivTo[T], func(a, b T) T { return a / b }},
	} {
		t.Run(fmt.Sprintf("%s/%T", op.name, T(0)), func(t *testing.T) {
			r := rand.New(rand.NewPCG(19, 20))
			special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1e-310, 1e-40, -3}
			for n := 1; n <= 67; n++ {
				a, _ := guarded[T](r, n)
				b, _ := guarded[T](r, n)
				for i := range a {
					if r.IntN(3) == 0 {
						a[i] = T(special[r.IntN(len(special))])
						b[i] = T(special[r.IntN(len(special))])
					}
				}
				dst, full := guarded[T](r, n)
				op.run(dst, a, b)
				checkGuards(t, op.name, full)
				want := make([]T, n)
				goLoops(func() { op.run(want, a, b) })
				ref := make([]T, n)
				for i := range ref {
					ref[i] = op.ref(a[i], b[i])
				}
				op.run(a, a, b) // in place, as the all-reduce runs AddTo
				for i := range dst {
					wb, db, ab := math.Float64bits(float64(want[i])), math.Float64bits(float64(dst[i])), math.Float64bits(float64(a[i]))
					if db != wb || ab != wb {
						t.Fatalf("n=%d: [%d] vector %v, in place %v; Go loop %v", n, i, dst[i], a[i], want[i])
					}
					if rb := math.Float64bits(float64(ref[i])); wb != rb && !math.IsNaN(float64(ref[i])) {
						t.Fatalf("n=%d: [%d] Go loop %v, reference loop %v", n, i, want[i], ref[i])
					}
				}
			}
		})
	}
}

// TestActivationVectorMatchesGo checks ReLUGrad's and AddReLU's assembly
// loops against their Go loops, bit for bit but for NaN payloads, and both
// against the loops in their doc comments, on signed zeros, infinities, NaN
// and subnormals too.
func TestActivationVectorMatchesGo(t *testing.T) {
	testActivationVector[float32](t)
	testActivationVector[float64](t)
}

func testActivationVector[T loops.Float](t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(), 1e-40, -1e-310, 2.5, -2.5}
	bits := func(v T) uint64 { return math.Float64bits(float64(v)) }
	for n := 1; n <= 67; n++ {
		a, _ := guarded[T](r, n)
		b, _ := guarded[T](r, n)
		for i := range a {
			if r.IntN(2) == 0 {
				a[i] = T(special[r.IntN(len(special))])
				b[i] = T(special[r.IntN(len(special))])
			}
		}
		for _, k := range []struct {
			name string
			run  func(dst, a, b []T)
			ref  func(a, b T) T
		}{
			{"ReLUGrad", func(d, a, b []T) { loops.ReLUGrad(d, a, b) }, func(y, dy T) T {
				if y > 0 || (y != y && !math.Signbit(float64(y))) {
					return dy
				}
				return 0
			}},
			{"AddReLU", func(d, a, b []T) { loops.AddReLU(d, a, b) }, func(a, b T) T { return max(a+b, 0) }},
		} {
			dst, full := guarded[T](r, n)
			k.run(dst, a, b)
			checkGuards(t, k.name, full)
			goLoop := make([]T, n)
			goLoops(func() { k.run(goLoop, a, b) })
			for i := range dst {
				// Any NaN matches a NaN: Go's max does not keep the NaN's
				// sign, VMAXPS does. Everything else matches bit for bit.
				want := k.ref(a[i], b[i])
				same := func(x, y T) bool { return bits(x) == bits(y) || (x != x && y != y) }
				if !same(dst[i], goLoop[i]) || !same(dst[i], want) {
					t.Fatalf("%s %T n=%d: [%d] of (%v, %v): vector %v, Go loop %v, want %v", k.name, T(0), n, i, a[i], b[i], dst[i], goLoop[i], want)
				}
			}
		}
	}
}

func TestAllReduceSumSmallAllocatesNothing(t *testing.T) {
	bufs := [][]float32{make([]float32, 1000), make([]float32, 1000)}
	if got := testing.AllocsPerRun(10, func() { loops.AllReduceSum(bufs) }); got != 0 {
		t.Errorf("AllReduceSum on 1000 elements allocates %v times, want 0", got)
	}
}

// The optimizer updates run once per variable per training step: on buffers
// too small to split they must not allocate (a closure built for the
// parallel path escapes to the heap).
func TestUpdatesDoNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	const n = 1000
	w, g, a, b := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	bufs := [][]float32{w, g}
	cases := []struct {
		name string
		fn   func()
	}{
		{"AdamUpdate", func() { loops.AdamUpdate(w, g, a, b, 1e-3, 0.9, 0.999, 1e-8, 1) }},
		{"AdamWUpdate", func() { loops.AdamWUpdate(w, g, a, b, 1e-3, 0.9, 0.999, 1e-8, 0.01, 1) }},
		{"SGDUpdate", func() { loops.SGDUpdate(w, g, a, 0.1, 0.9, true) }},
		{"SGDUpdate without momentum", func() { loops.SGDUpdate(w, g, nil, 0.1, 0, false) }},
		{"RMSpropUpdate", func() { loops.RMSpropUpdate(w, g, a, b, 1e-3, 0.9, 1e-7, 0.5) }},
		{"AllReduceSum", func() { loops.AllReduceSum(bufs) }},
	}
	for _, c := range cases {
		if got := testing.AllocsPerRun(20, c.fn); got != 0 {
			t.Errorf("%s on %d elements: %v allocations per call, want 0", c.name, n, got)
		}
	}
}

// TestScaleToFloat32 checks ScaleTo's float32 loops, the assembly and the
// Go loop, against the product in float32, and that neither writes past
// dst.
func TestScaleToFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, vec := range []bool{true, false} {
		prev := loops.SetUseVector(vec)
		for _, n := range sizes {
			x, _ := guarded[float32](r, n)
			dst, full := guarded[float32](r, n)
			loops.ScaleTo(dst, 1.7, x)
			checkGuards(t, "ScaleTo", full)
			for i := range dst {
				if want := 1.7 * x[i]; dst[i] != want {
					t.Fatalf("vector=%v n=%d: dst[%d] = %v, want %v", vec, n, i, dst[i], want)
				}
			}
		}
		loops.SetUseVector(prev)
	}
}
