package loops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// TestSoftmaxLoops compares Dot and SoftmaxGradTo, assembly and Go,
// with their doc comments' loops written out here, bit for bit.
func TestSoftmaxLoops(t *testing.T) {
	for _, vec := range []bool{true, false} {
		for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 64, 67} {
			t.Run(fmt.Sprintf("vector=%v/n=%d", vec, n), func(t *testing.T) {
				defer loops.SetUseVector(loops.SetUseVector(vec))
				r := rand.New(rand.NewPCG(uint64(n), 9))
				y, dy, dst := make([]float32, n), make([]float32, n), make([]float32, n)
				for i := range y {
					y[i], dy[i] = float32(r.Float64()), float32(r.NormFloat64())
				}
				want := normRefLanes(n, func(j int) float64 { return float64(y[j]) * float64(dy[j]) })
				s := loops.Dot(y, dy)
				if s != want {
					t.Errorf("Dot = %v, want %v", s, want)
				}
				loops.SoftmaxGradTo(dst, y, dy, s)
				for j := range n {
					if w := float32(float64(y[j]) * (float64(dy[j]) - s)); dst[j] != w {
						t.Errorf("SoftmaxGradTo: dst[%d] = %v, want %v", j, dst[j], w)
					}
				}
			})
		}
	}
}
