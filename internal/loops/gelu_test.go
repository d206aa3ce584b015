package loops_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// geluInputs are values of every region of the float32 GELU: the core
// (|x| < 2), its edge, the tails, where exp underflows, and the specials.
func geluInputs(r *rand.Rand, n int) []float32 {
	x := []float32{0, 1, -1, 2, -2, math.Nextafter32(2, 0), -math.Nextafter32(2, 0), 3, -3, 5.5, -5.5, 10, -10, 13.1, -13.1, 14, -14,
		40, -40, 1e-6, -1e-6, 1e-30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for len(x) < n {
		x = append(x, float32(r.NormFloat64()*3))
	}
	return x
}

// TestGELU compares both float types with float64 math: float64 exactly
// as its loop is written, float32 to a few float32 ulps, relative where
// the values are large and absolute where they are small.
func TestGELU(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := geluInputs(r, 100003)
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	y, dx := make([]float32, len(x)), make([]float32, len(x))
	loops.GELU(y, x)
	loops.GELUGrad(dx, x, dy)
	for i, v := range x {
		xf := float64(v)
		cdf := 0.5 * (1 + math.Erf(xf/math.Sqrt2))
		wantY := xf * cdf
		wantDx := float64(dy[i]) * (cdf + xf*math.Exp(-xf*xf/2)/math.Sqrt(2*math.Pi))
		if !near32(y[i], wantY) {
			t.Errorf("GELU(%v) = %.9g, want %.9g", v, y[i], wantY)
		}
		if !near32(dx[i], wantDx) {
			t.Errorf("GELUGrad(%v, dy %v) = %.9g, want %.9g", v, dy[i], dx[i], wantDx)
		}
	}
	x64 := []float64{-3, -0.5, 0, 0.5, 3}
	y64 := make([]float64, len(x64))
	loops.GELU(y64, x64)
	for i, v := range x64 {
		if want := v * 0.5 * (1 + math.Erf(v/math.Sqrt2)); y64[i] != want {
			t.Errorf("GELU(%v) = %.17g in float64, want %.17g", v, y64[i], want)
		}
	}
}

func near32(got float32, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(float64(got))
	}
	if math.IsInf(want, 0) {
		return float64(got) == want
	}
	return math.Abs(float64(got)-want) <= 4e-7*math.Max(1, math.Abs(want))
}

// narrowGELUInputs are n values with |x| < 2, where the assembly skips the
// tail branch 8 lanes at a time, but for a lane of 2, -2, a NaN or 7 every
// few vectors.
func narrowGELUInputs(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.Max(-1.99, math.Min(1.99, r.NormFloat64()*0.7)))
	}
	odd := []float32{2, -2, float32(math.NaN()), 7}
	for i := 5; i < n; i += 37 {
		x[i] = odd[i%len(odd)]
	}
	return x
}

// TestGELUVectorMatchesGo checks that the assembly loops give the Go loops'
// bits, remainders included, on vectors with lanes on both sides of |x| = 2
// and on vectors all of whose lanes are below it.
func TestGELUVectorMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, n := range []int{1, 7, 8, 9, 31, 67, 5003, -1003} {
		var x []float32
		if n > 0 {
			x = geluInputs(r, n)[:n]
		} else {
			n = -n
			x = narrowGELUInputs(r, n)
		}
		dy := make([]float32, n)
		for i := range dy {
			dy[i] = float32(r.NormFloat64())
		}
		y, dx, y2, dx2 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		loops.GELU(y, x)
		loops.GELUGrad(dx, x, dy)
		goLoops(func() {
			loops.GELU(y2, x)
			loops.GELUGrad(dx2, x, dy)
		})
		for i := range x {
			if math.Float32bits(y[i]) != math.Float32bits(y2[i]) && !(y[i] != y[i] && y2[i] != y2[i]) {
				t.Errorf("n=%d: GELU(%v) = %.9g, Go loop %.9g", n, x[i], y[i], y2[i])
			}
			if math.Float32bits(dx[i]) != math.Float32bits(dx2[i]) && !(dx[i] != dx[i] && dx2[i] != dx2[i]) {
				t.Errorf("n=%d: GELUGrad(%v) = %.9g, Go loop %.9g", n, x[i], dx[i], dx2[i])
			}
		}
	}
}

func BenchmarkGELU(b *testing.B) {
	for _, n := range benchSizes {
		x := geluInputs(rand.New(rand.NewPCG(1, 2)), n)[:n]
		out := make([]float32, n)
		b.Run("f32/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				loops.GELU(out, x)
			}
		})
		b.Run("grad-f32/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				loops.GELUGrad(out, x, x)
			}
		})
		b.Run("naive-f32/"+sizeName(n), func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				for i, v := range x {
					out[i] = float32(float64(v) * 0.5 * (1 + math.Erf(float64(v)/math.Sqrt2)))
				}
			}
		})
	}
}
