package blas_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/internal/blas"
)

// naiveGemm is the reference triple loop for row-major C = alpha·op(A)·op(B) + beta·C.
func naiveGemm(ta, tb bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var x, y float64
				if ta {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if tb {
					y = b[j*ldb+p]
				} else {
					y = b[p*ldb+j]
				}
				s += x * y
			}
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
}

func randSlice(r *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = r.NormFloat64()
	}
	return s
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name       string
		m, n, k    int
		ta, tb     bool
		alpha, bet float64
		pad        int // extra columns in every leading dimension
	}{
		{"nn", 3, 4, 5, false, false, 1, 0, 0},
		{"tn", 7, 2, 3, true, false, 1, 0, 0},
		{"nt", 5, 6, 4, false, true, 1, 0, 0},
		{"tt", 4, 4, 9, true, true, 1, 0, 0},
		{"alpha-beta", 6, 5, 7, false, false, 0.5, -2, 0},
		{"padded-lead", 6, 5, 7, true, true, 1.5, 1, 3},
		{"k=0", 3, 3, 0, false, false, 1, 2, 0},
		{"one", 1, 1, 1, false, false, 1, 0, 0},
		{"large", 65, 70, 129, false, true, 1, 0.25, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ar, ac := tt.m, tt.k
			if tt.ta {
				ar, ac = ac, ar
			}
			br, bc := tt.k, tt.n
			if tt.tb {
				br, bc = bc, br
			}
			lda, ldb, ldc := ac+tt.pad, bc+tt.pad, tt.n+tt.pad
			a := randSlice(r, max(ar*lda, 0))
			b := randSlice(r, max(br*ldb, 0))
			c := randSlice(r, tt.m*ldc)
			want := append([]float64(nil), c...)
			naiveGemm(tt.ta, tt.tb, tt.m, tt.n, tt.k, tt.alpha, a, lda, b, ldb, tt.bet, want, ldc)

			c64 := append([]float64(nil), c...)
			blas.Dgemm(tt.ta, tt.tb, tt.m, tt.n, tt.k, tt.alpha, a, lda, b, ldb, tt.bet, c64, ldc)
			c32 := make([]float32, len(c))
			for i, v := range c {
				c32[i] = float32(v)
			}
			blas.Sgemm(tt.ta, tt.tb, tt.m, tt.n, tt.k, float32(tt.alpha), to32(a), lda, to32(b), ldb, float32(tt.bet), c32, ldc)
			for i := 0; i < tt.m; i++ {
				for j := 0; j < tt.n; j++ {
					p := i*ldc + j
					if d := math.Abs(c64[p] - want[p]); d > 1e-12*(1+math.Abs(want[p]))*float64(tt.k+1) {
						t.Errorf("Dgemm C[%d,%d] = %v, want %v", i, j, c64[p], want[p])
					}
					if d := math.Abs(float64(c32[p]) - want[p]); d > 1e-5*(1+math.Abs(want[p]))*float64(tt.k+1) {
						t.Errorf("Sgemm C[%d,%d] = %v, want %v", i, j, c32[p], want[p])
					}
				}
				// Padding columns must be untouched.
				for j := tt.n; j < ldc; j++ {
					if p := i*ldc + j; c64[p] != c[p] {
						t.Errorf("Dgemm wrote padding C[%d,%d]", i, j)
					}
				}
			}
		})
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func TestThreads(t *testing.T) {
	prev := blas.Threads()
	defer blas.SetThreads(prev)
	blas.SetThreads(1)
	if got := blas.Threads(); got != 1 {
		t.Errorf("Threads() = %d after SetThreads(1), want 1", got)
	}
	if blas.Name() == "" {
		t.Error("Name() is empty")
	}
}

func ExampleSgemm() {
	// [1 2; 3 4] · [5 6; 7 8]
	a := []float32{1, 2, 3, 4}
	b := []float32{5, 6, 7, 8}
	c := make([]float32, 4)
	blas.Sgemm(false, false, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2)
	fmt.Printf("%.1f\n", c)
	// Output: [19.0 22.0 43.0 50.0]
}

func ExampleDgemm() {
	// aᵀ·a for a = [1 2; 3 4], without forming aᵀ.
	a := []float64{1, 2, 3, 4}
	c := make([]float64, 4)
	blas.Dgemm(true, false, 2, 2, 2, 1, a, 2, a, 2, 0, c, 2)
	fmt.Printf("%.1f\n", c)
	// Output: [10.0 14.0 14.0 20.0]
}

func ExampleSetThreads() {
	blas.SetThreads(1) // one replica per core: no BLAS thread pool
	fmt.Println(blas.Threads())
	// Output: 1
}
