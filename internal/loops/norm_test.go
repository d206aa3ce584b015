package loops_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

// normRefLanes sums term(j) for j < n in Sum's 4 lanes and order.
func normRefLanes(n int, term func(j int) float64) float64 {
	var l [4]float64
	m := n &^ 3
	for j := range m {
		l[j%4] += term(j)
	}
	s := (l[0] + l[1]) + (l[2] + l[3])
	for j := m; j < n; j++ {
		s += term(j)
	}
	return s
}

// TestNormLoops compares the norm row loops, assembly and Go, with their
// doc comments' loops written out here, bit for bit, on rows that take
// whole vectors, a rest, or only a rest, with neither γ nor β, γ alone
// (a GPT's LayerNorm) or both.
func TestNormLoops(t *testing.T) {
	for _, vec := range []bool{true, false} {
		for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 128, 131} {
			for _, p := range []string{"", "gamma", "gamma+beta"} {
				t.Run(fmt.Sprintf("vector=%v/n=%d/%s", vec, n, p), func(t *testing.T) {
					defer loops.SetUseVector(loops.SetUseVector(vec))
					checkNormLoops(t, n, p != "", p == "gamma+beta")
				})
			}
		}
	}
}

func checkNormLoops(t *testing.T, n int, withGamma, withBeta bool) {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	rnd := func(mean float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + r.NormFloat64())
		}
		return v
	}
	x, dy := rnd(3), rnd(0)
	var gamma, beta []float32
	if withGamma {
		gamma = rnd(1)
	}
	if withBeta {
		beta = rnd(0)
	}
	mean, rstd, mg, mgx := 2.9, 1.1, 0.3, -0.7
	f := func(v []float32, j int) float64 { return float64(v[j]) }
	xh := func(j int) float64 { return (f(x, j) - mean) * rstd }
	g := func(j int) float64 {
		if gamma == nil {
			return f(dy, j)
		}
		return f(dy, j) * f(gamma, j)
	}
	if got, want := loops.Sum(x), normRefLanes(n, func(j int) float64 { return f(x, j) }); got != want {
		t.Errorf("Sum = %v, want %v", got, want)
	}
	sq := func(j int) float64 { d := f(x, j) - mean; return d * d }
	if got, want := loops.SumSqDev(x, mean), normRefLanes(n, sq); got != want {
		t.Errorf("SumSqDev = %v, want %v", got, want)
	}
	sg, sgx := loops.NormGradSums(x, dy, gamma, mean, rstd)
	wg, wgx := normRefLanes(n, g), normRefLanes(n, func(j int) float64 { return g(j) * xh(j) })
	if sg != wg || sgx != wgx {
		t.Errorf("NormGradSums = %v, %v, want %v, %v", sg, sgx, wg, wgx)
	}
	y, dx := make([]float32, n), make([]float32, n)
	loops.NormTo(y, x, gamma, beta, mean, rstd)
	loops.NormGradTo(dx, x, dy, gamma, mean, rstd, mg, mgx)
	for j := range n {
		want := xh(j)
		if withGamma {
			want *= f(gamma, j)
		}
		if withBeta {
			want += f(beta, j)
		}
		if y[j] != float32(want) {
			t.Errorf("NormTo: y[%d] = %v, want %v", j, y[j], float32(want))
		}
		if w := float32(rstd * ((g(j) - mg) - xh(j)*mgx)); dx[j] != w {
			t.Errorf("NormGradTo: dx[%d] = %v, want %v", j, dx[j], w)
		}
	}
	acc := make([]float64, n)
	for j := range acc {
		acc[j] = float64(j) - 0.5
	}
	loops.NormGammaGradAdd(acc, x, dy, mean, rstd)
	for j, v := range acc {
		if w := (float64(j) - 0.5) + f(dy, j)*xh(j); v != w {
			t.Errorf("NormGammaGradAdd: acc[%d] = %v, want %v", j, v, w)
		}
	}
	x64 := make([]float64, n)
	for i, v := range x {
		x64[i] = float64(v)
	}
	if got, want := loops.Sum(x64), loops.Sum(x); got != want {
		t.Errorf("float64 Sum = %v, float32 %v", got, want)
	}
}
