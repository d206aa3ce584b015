package loops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// expInputs are a softmax row's values below a shift of 0: the masked
// (-Inf), where exp underflows, and ordinary logits.
func expInputs(r *rand.Rand, n int) []float32 {
	x := []float32{0, -1e-8, -0.5, -0.3465736, -0.3465737, -1, -10, -86.9, -87, -87.1, -100, float32(math.Inf(-1))}
	for len(x) < n {
		x = append(x, float32(-math.Abs(r.NormFloat64()*8)))
	}
	return x[:n]
}

// TestExpSubTo compares the float32 exponentials with math.Exp, relative
// to each, and the sum with the float64 sum; float64 is its loop exactly.
func TestExpSubTo(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 7, 8, 12, 64, 65, 1000} {
		x := expInputs(r, n)
		for i := range x {
			x[i] += 3 // a shift of 3: the exponents are x - 3 ≤ 0 again
		}
		dst := make([]float32, n)
		got := loops.ExpSubTo(dst, x, 3)
		var want float64
		for i, v := range x {
			e := math.Exp(float64(v - 3))
			want += e
			if v-3 < -87 {
				e = 0 // below float32's normals ExpSubTo gives 0
			}
			if math.Abs(float64(dst[i])-e) > 3e-7*e {
				t.Errorf("n=%d: exp(%v - 3) = %.9g, want %.9g", n, v, dst[i], e)
			}
		}
		if math.Abs(float64(got)-want) > 1e-6*want {
			t.Errorf("n=%d: sum %.9g, want %.9g", n, got, want)
		}
	}
	x64, dst64 := []float64{-2, -1, 0}, make([]float64, 3)
	if got, want := loops.ExpSubTo(dst64, x64, 1), math.Exp(-3)+math.Exp(-2)+math.Exp(-1); got != want || dst64[1] != math.Exp(-2) {
		t.Errorf("float64: sum %.17g, exps %v; want %.17g", got, dst64, want)
	}
	nan := []float32{float32(math.NaN()), -1}
	if s := loops.ExpSubTo(make([]float32, 2), nan, 0); s == s {
		t.Errorf("a NaN gave the sum %v, want NaN", s)
	}
}

// TestExpSubVectorMatchesGo checks that the assembly loop gives the Go
// loop's bits, exponentials and sum, remainders included.
func TestExpSubVectorMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, n := range []int{1, 7, 8, 9, 64, 65, 5003} {
		x := expInputs(r, n)
		dst, dst2 := make([]float32, n), make([]float32, n)
		s := loops.ExpSubTo(dst, x, 0)
		var s2 float32
		goLoops(func() { s2 = loops.ExpSubTo(dst2, x, 0) })
		if math.Float32bits(s) != math.Float32bits(s2) {
			t.Errorf("n=%d: sum %.9g, Go loop %.9g", n, s, s2)
		}
		for i := range x {
			if math.Float32bits(dst[i]) != math.Float32bits(dst2[i]) {
				t.Errorf("n=%d: exp(%v) = %.9g, Go loop %.9g", n, x[i], dst[i], dst2[i])
			}
		}
	}
}

func BenchmarkExpSubTo(b *testing.B) {
	for _, n := range benchSizes {
		x := expInputs(rand.New(rand.NewPCG(1, 2)), n)
		dst := make([]float32, n)
		b.Run("f32/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				sink += float64(loops.ExpSubTo(dst, x, 0))
			}
		})
		b.Run("naive-f32/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				var s float64
				for i, v := range x {
					e := math.Exp(float64(v))
					dst[i] = float32(e)
					s += e
				}
				sink += s
			}
		})
	}
}

// TestExpSubToAllocs: a softmax calls ExpSubTo once per row of every step,
// and steps allocate nothing.
func TestExpSubToAllocs(t *testing.T) {
	x, dst := expInputs(rand.New(rand.NewPCG(35, 36)), 67), make([]float32, 67)
	if n := testing.AllocsPerRun(100, func() { loops.ExpSubTo(dst, x, 0.5) }); n != 0 {
		t.Errorf("ExpSubTo allocated %v times a call, want 0", n)
	}
	y := make([]float32, 67)
	if n := testing.AllocsPerRun(100, func() { loops.GELU(y, x); loops.GELUGrad(y, x, dst) }); n != 0 {
		t.Errorf("GELU and GELUGrad allocated %v times a call, want 0", n)
	}
}
