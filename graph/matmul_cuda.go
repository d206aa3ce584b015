//go:build cuda

package graph

import (
	"github.com/gotrain/gotrain/gpu"
)

// The CUDA kernel of batch_matmul (matmul.go): one batched cuBLAS call
// over arrays of block pointers kept in the step's parameter slot, a
// broadcast operand's block repeated in its array.

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opMatMul:      {plan: matMulCUDA},
		opDense:       {plan: denseCUDA},
		opBatchMatMul: {plan: batchMatMulCUDA, words: batchMatMulWords},
	})
	addCUDASource("matmul", matmulSrc)
}

func batchMatMulWords(n *Node) int { return 3 * sizeOf(n.shape[:len(n.shape)-2]) }

func batchMatMulCUDA(b *devBuilder, n *Node) (func() error, error) {
	bg := batchGemmOf(n)
	cs := make([]int, len(bg.a))
	for i := range cs {
		cs[i] = i * bg.m * bg.n
	}
	return b.gemmBatched(n.transA, n.transB, bg.m, bg.n, bg.k, 1,
		b.in(0), bg.a, bg.lda, b.in(1), bg.b, bg.ldb, b.out(), cs, bg.n)
}

// gemmBatched returns one batched cuBLAS call computing, for each i,
//
//	c[co[i]:] = alpha·op(a[ao[i]:])·op(bm[bo[i]:])
//
// the offsets in elements, as gemmFor's BLAS call computes each block on
// the CPU. It puts 3·len(ao) pointers in n's parameter slot, so the op's
// cudaKernel.words must count them. With k == 0 it clears n's whole
// output, which every caller's blocks then cover.
func (b *devBuilder) gemmBatched(transA, transB bool, m, n, k int, alpha float64, a gpu.Ptr, ao []int, lda int, bm gpu.Ptr, bo []int, ldb int, c gpu.Ptr, co []int, ldc int) (func() error, error) {
	nb, esz := len(ao), b.d.p.dt.size()
	switch {
	case m == 0 || n == 0 || nb == 0:
		return func() error { return nil }, nil
	case k == 0:
		return b.zero(), nil
	}
	as, bs, cs := make([]int, nb), make([]int, nb), make([]int, nb)
	for i := range nb {
		as[i] = int(a.Add(ao[i] * esz))
		bs[i] = int(bm.Add(bo[i] * esz))
		cs[i] = int(c.Add(co[i] * esz))
	}
	pa, pb, pc := b.ints(as...), b.ints(bs...), b.ints(cs...)
	h, err := b.d.handle()
	if err != nil {
		return nil, err
	}
	if b.d.p.dt == Float32 {
		return func() error {
			return h.GemmBatched32(transA, transB, m, n, k, float32(alpha), pa, lda, pb, ldb, 0, pc, ldc, nb)
		}, nil
	}
	return func() error {
		return h.GemmBatched64(transA, transB, m, n, k, alpha, pa, lda, pb, ldb, 0, pc, ldc, nb)
	}, nil
}

func matMulCUDA(b *devBuilder, n *Node) (func() error, error) {
	m, nn := n.shape[0], n.shape[1]
	k, lda, ldb := n.in[0].shape[1], n.in[0].shape[1], n.in[1].shape[1]
	if n.transA {
		k = n.in[0].shape[0]
	}
	return b.gemm(n.transA, n.transB, m, nn, k, b.in(0), lda, b.in(1), ldb, b.out(), nn)
}

func denseCUDA(b *devBuilder, n *Node) (func() error, error) {
	m, k, nn := n.in[0].shape[0], n.in[0].shape[1], n.shape[1]
	mm, err := b.gemm(false, false, m, nn, k, b.in(0), k, b.in(1), nn, b.out(), nn)
	if err != nil {
		return nil, err
	}
	var bias gpu.Ptr // none: the kernel adds no bias
	if len(n.in) == 3 {
		bias = b.in(2)
	} else if n.act == Linear {
		return mm, nil
	}
	ba, err := b.kernel("gt_bias_act", n.size, b.out(), bias, n.size, nn, int(n.act))
	if err != nil {
		return nil, err
	}
	return seq(mm, ba), nil
}

// gemm returns c = op(a)·op(b) in n's dtype through cuBLAS, as gemmFor's
// BLAS call computes it on the CPU.
func (b *devBuilder) gemm(transA, transB bool, m, n, k int, a gpu.Ptr, lda int, bm gpu.Ptr, ldb int, c gpu.Ptr, ldc int) (func() error, error) {
	s := b.d.s
	switch {
	case m == 0 || n == 0:
		return func() error { return nil }, nil
	case k == 0:
		words := m * n * b.d.p.dt.size() / 4
		return func() error { return s.Memset32(c, 0, words) }, nil
	}
	h, err := b.d.handle()
	if err != nil {
		return nil, err
	}
	if b.d.p.dt == Float32 {
		return func() error { return h.Gemm32(transA, transB, m, n, k, 1, a, lda, bm, ldb, 0, c, ldc) }, nil
	}
	return func() error { return h.Gemm64(transA, transB, m, n, k, 1, a, lda, bm, ldb, 0, c, ldc) }, nil
}

// matmulSrc holds the kernels of a dense layer's epilogue after its gemm,
// one thread per element.
const matmulSrc = `
// gt_bias_act is biasAct after a dense layer's gemm (b null: no bias).
KERNEL void gt_bias_act(T *out, const T *b, long long n, long long cols, long long act) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T v = out[i];
	if (b) v = v + b[i % cols];
	out[i] = act_t(v, act);
}
`
