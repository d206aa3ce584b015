//go:build cuda

package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/gpu"
)

// pointers uploads the device pointers ps as an array of 8-byte words.
func pointers(t *testing.T, d *gpu.Device, s *gpu.Stream, ps ...gpu.Ptr) gpu.Ptr {
	t.Helper()
	words := make([]float64, len(ps))
	for i, p := range ps {
		words[i] = math.Float64frombits(uint64(p))
	}
	return upload(t, d, s, words)
}

// TestGemmBatched multiplies three A blocks by one B, repeated in the
// pointer array as a broadcast operand is, and checks each product
// against the naive loop.
func TestGemmBatched(t *testing.T) {
	d, s := open(t, 0)
	h, err := gpu.NewHandle(s)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	r := rand.New(rand.NewPCG(22, 1))
	const m, n, k, batch = 4, 3, 5, 3
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		lda, ldb := k, n
		if tc.transA {
			lda = m
		}
		if tc.transB {
			ldb = k
		}
		a, b, c := randSlice(r, batch*m*k), randSlice(r, k*n), randSlice(r, batch*m*n)
		want := append([]float64(nil), c...)
		for i := range batch {
			naiveGemm(tc.transA, tc.transB, m, n, k, 1.5, a[i*m*k:], lda, b, ldb, 0.25, want[i*m*n:], n)
		}
		run := func(t *testing.T, esz int, pa, pb, pc gpu.Ptr, gemm func(a, b, c gpu.Ptr) error) {
			var as, bs, cs []gpu.Ptr
			for i := range batch {
				as = append(as, pa.Add(i*m*k*esz))
				bs = append(bs, pb)
				cs = append(cs, pc.Add(i*m*n*esz))
			}
			if err := gemm(pointers(t, d, s, as...), pointers(t, d, s, bs...), pointers(t, d, s, cs...)); err != nil {
				t.Fatal(err)
			}
		}
		name := fmt.Sprintf("transA=%v,transB=%v", tc.transA, tc.transB)
		t.Run(name+"/f64", func(t *testing.T) {
			pa, pb, pc := upload(t, d, s, a), upload(t, d, s, b), upload(t, d, s, c)
			run(t, 8, pa, pb, pc, func(ap, bp, cp gpu.Ptr) error {
				return h.GemmBatched64(tc.transA, tc.transB, m, n, k, 1.5, ap, lda, bp, ldb, 0.25, cp, n, batch)
			})
			wantNear(t, download[float64](t, s, pc, len(c)), want, 1e-12)
		})
		t.Run(name+"/f32", func(t *testing.T) {
			pa, pb, pc := upload(t, d, s, toF32(a)), upload(t, d, s, toF32(b)), upload(t, d, s, toF32(c))
			run(t, 4, pa, pb, pc, func(ap, bp, cp gpu.Ptr) error {
				return h.GemmBatched32(tc.transA, tc.transB, m, n, k, 1.5, ap, lda, bp, ldb, 0.25, cp, n, batch)
			})
			wantNear(t, download[float32](t, s, pc, len(c)), want, 1e-5)
		})
	}
}
