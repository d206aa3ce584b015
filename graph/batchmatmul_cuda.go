//go:build cuda

package graph

// The CUDA kernel of batch_matmul (batchmatmul.go): one batched cuBLAS call
// over arrays of block pointers kept in the step's parameter slot, a
// broadcast operand's block repeated in its array.

func batchMatMulWords(n *Node) int { return 3 * sizeOf(n.shape[:len(n.shape)-2]) }

func batchMatMulCUDA(b *devBuilder, n *Node) (func() error, error) {
	bg := batchGemmOf(n)
	nb, esz := len(bg.a), b.d.p.dt.size()
	switch {
	case bg.m == 0 || bg.n == 0 || nb == 0:
		return func() error { return nil }, nil
	case bg.k == 0:
		return b.zero(), nil
	}
	as, bs, cs := make([]int, nb), make([]int, nb), make([]int, nb)
	for i := range nb {
		as[i] = int(b.in(0).Add(bg.a[i] * esz))
		bs[i] = int(b.in(1).Add(bg.b[i] * esz))
		cs[i] = int(b.out().Add(i * bg.m * bg.n * esz))
	}
	pa, pb, pc := b.ints(as...), b.ints(bs...), b.ints(cs...)
	h, err := b.d.handle()
	if err != nil {
		return nil, err
	}
	ta, tb := n.transA, n.transB
	if b.d.p.dt == Float32 {
		return func() error {
			return h.GemmBatched32(ta, tb, bg.m, bg.n, bg.k, 1, pa, bg.lda, pb, bg.ldb, 0, pc, bg.n, nb)
		}, nil
	}
	return func() error {
		return h.GemmBatched64(ta, tb, bg.m, bg.n, bg.k, 1, pa, bg.lda, pb, bg.ldb, 0, pc, bg.n, nb)
	}, nil
}
