package loops_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gotrain/gotrain/internal/loops"
)

var benchSizes = []int{1, 300, 10000, 100000}

// sizeName spells sizes as in the brief's benchmark names: 300, 1e4, 1e5.
func sizeName(n int) string {
	switch n {
	case 10000:
		return "1e4"
	case 100000:
		return "1e5"
	}
	return fmt.Sprint(n)
}

// sink keeps results alive so the compiler cannot drop benchmarked work.
var sink float64

func BenchmarkAllReduceSum(b *testing.B) {
	for _, n := range benchSizes {
		bufs := [][]float32{make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)}
		b.Run(fmt.Sprintf("AllReduceSum-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * len(bufs)))
			for b.Loop() {
				loops.AllReduceSum(bufs)
			}
		})
		b.Run(fmt.Sprintf("Naive-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * len(bufs)))
			for b.Loop() {
				for i := range bufs[0] {
					s := bufs[0][i]
					for r := 1; r < len(bufs); r++ {
						s += bufs[r][i]
					}
					for r := range bufs {
						bufs[r][i] = s
					}
				}
			}
		})
	}
}

func BenchmarkAdamUpdate(b *testing.B) {
	for _, n := range benchSizes {
		w, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range g {
			g[i] = 0.01
		}
		b.Run(fmt.Sprintf("AdamUpdate-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 4))
			for b.Loop() {
				loops.AdamUpdate(w, g, m, v, 1e-3, 0.9, 0.999, 1e-8, 10)
			}
		})
		b.Run(fmt.Sprintf("Naive-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 4))
			for b.Loop() {
				bc1 := 1 - math.Pow(0.9, 10)
				bc2 := 1 - math.Pow(0.999, 10)
				for i := range w {
					m[i] = 0.9*m[i] + 0.1*g[i]
					v[i] = 0.999*v[i] + 0.001*g[i]*g[i]
					denom := float32(math.Sqrt(float64(v[i]))/math.Sqrt(bc2)) + 1e-8
					w[i] -= float32(1e-3/bc1) * m[i] / denom
				}
			}
		})
	}
}

func BenchmarkSGDUpdate(b *testing.B) {
	for _, n := range benchSizes {
		w, g, vel := make([]float32, n), make([]float32, n), make([]float32, n)
		b.Run(fmt.Sprintf("SGDUpdate-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 3))
			for b.Loop() {
				loops.SGDUpdate(w, g, vel, 0.1, 0.9, false)
			}
		})
	}
}

func BenchmarkDot(b *testing.B) {
	for _, n := range benchSizes {
		x, y := make([]float32, n), make([]float32, n)
		b.Run(fmt.Sprintf("Dot-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 2))
			for b.Loop() {
				sink += loops.Dot(x, y)
			}
		})
	}
}

func BenchmarkAddTo(b *testing.B) {
	for _, n := range benchSizes {
		dst, x, y := make([]float32, n), make([]float32, n), make([]float32, n)
		b.Run(fmt.Sprintf("AddTo-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 3))
			for b.Loop() {
				loops.AddTo(dst, x, y)
			}
		})
		b.Run(fmt.Sprintf("Naive-%s", sizeName(n)), func(b *testing.B) {
			b.SetBytes(int64(4 * n * 3))
			for b.Loop() {
				for i := range dst {
					dst[i] = x[i] + y[i]
				}
			}
		})
	}
}
