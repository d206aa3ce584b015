package gorgoniamodel

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"

	gblas "github.com/gotrain/gotrain/internal/blas"
)

// products is gorgonia's BLAS with the matrix products gotrain's engine uses
// (OpenBLAS, or gonum's without cgo or with the noopenblas tag); everything
// else stays gonum's. The products are most of a training step, and
// gonum's pure-Go gemm made the MLP 784-512-512-10 at batch 256 about three
// times slower than OpenBLAS's.
type products struct{ gonum.Implementation }

func (products) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gblas.Sgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func (products) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	gblas.Dgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

var useProducts sync.Once

// useBLAS makes gorgonia use products, once per process: New calls it,
// so a later gorgonia.Use of the user's own choice stays in force.
func useBLAS() { useProducts.Do(func() { G.Use(products{}) }) }
