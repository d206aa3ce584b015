package loops_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// maxInputs are n values around 0 with the cases Max must get right
// scattered among them: NaNs it skips, infinities, and the largest value
// in the middle of a vector, in a lane of its own, or in the remainder.
func maxInputs(r *rand.Rand, n, peak int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for i := 3; i < n; i += 11 {
		x[i] = float32(math.NaN())
	}
	for i := 5; i < n; i += 13 {
		x[i] = float32(math.Inf(-1))
	}
	if peak < n && n > 0 {
		x[peak] = 9
	}
	return x
}

// TestMax compares Max with the loop of its doc comment, on both types.
func TestMax(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	inf := float32(math.Inf(1))
	for _, n := range []int{0, 1, 5, 7, 8, 9, 16, 64, 65, 1003} {
		for _, peak := range []int{0, n / 2, n - 1, n} {
			x := maxInputs(r, n, peak)
			want := float32(math.Inf(-1))
			for _, v := range x {
				if v > want {
					want = v
				}
			}
			if got := loops.Max(x); got != want {
				t.Errorf("n=%d, peak at %d: Max = %v, want %v", n, peak, got, want)
			}
			x64 := make([]float64, n)
			for i, v := range x {
				x64[i] = float64(v)
			}
			if got := loops.Max(x64); got != float64(want) {
				t.Errorf("n=%d, peak at %d: float64 Max = %v, want %v", n, peak, got, want)
			}
		}
	}
	nan := float32(math.NaN())
	for _, c := range []struct {
		x    []float32
		want float32
	}{
		{[]float32{nan, nan, nan}, float32(math.Inf(-1))},
		{[]float32{nan, 1, nan, nan, nan, nan, nan, nan, nan, -2}, 1},
		{[]float32{-1, -2, -3, -4, -5, -6, -7, inf, -9}, inf},
	} {
		if got := loops.Max(c.x); got != c.want {
			t.Errorf("Max(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// TestMaxVectorMatchesGo checks that the assembly loop gives the Go loop's
// bits, a zero's sign included (each lane keeps the first of 0 and -0).
func TestMaxVectorMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	negZero := float32(math.Copysign(0, -1))
	for _, n := range []int{8, 9, 24, 64, 65, 5003} {
		x := maxInputs(r, n, n/3)
		zeros := make([]float32, n)
		for i := range zeros {
			zeros[i] = negZero
			if i%3 == 1 {
				zeros[i] = 0
			}
		}
		for _, in := range [][]float32{x, zeros} {
			var goMax float32
			goLoops(func() { goMax = loops.Max(in) })
			if got := loops.Max(in); math.Float32bits(got) != math.Float32bits(goMax) {
				t.Errorf("n=%d: Max = %v (bits %#x), Go loop %v (bits %#x)", n, got, math.Float32bits(got), goMax, math.Float32bits(goMax))
			}
		}
	}
}

// TestMaxAllocs: a softmax calls Max once per row of every step, and steps
// allocate nothing.
func TestMaxAllocs(t *testing.T) {
	x := maxInputs(rand.New(rand.NewPCG(45, 46)), 67, 30)
	if n := testing.AllocsPerRun(100, func() { loops.Max(x) }); n != 0 {
		t.Errorf("Max allocated %v times a call, want 0", n)
	}
}

func BenchmarkMax(b *testing.B) {
	for _, n := range []int{64, 10000} {
		x := maxInputs(rand.New(rand.NewPCG(1, 2)), n, n/2)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var sink float32
			for b.Loop() {
				sink += loops.Max(x)
			}
			_ = sink
		})
	}
}

func ExampleMax() {
	fmt.Println(loops.Max([]float32{0.5, float32(math.NaN()), 2, -1}))
	fmt.Println(loops.Max([]float64{}))
	// Output:
	// 2
	// -Inf
}
