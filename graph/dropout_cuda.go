//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opDropoutMask: {plan: dropoutMaskCUDA},
	})
}

func dropoutMaskCUDA(b *devBuilder, n *Node) (func() error, error) {
	thr := uint64(n.rate * (1 << 53))
	keep := b.doubles(1 / (1 - n.rate))
	return b.kernel(elementwise, "gt_dropout_mask", n.size, b.out(), b.in(0), n.size, thr, n.seed, n.stream, keep)
}
