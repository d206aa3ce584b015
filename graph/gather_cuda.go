//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opGather:     {plan: gatherCUDA},
		opScatterAdd: {plan: scatterAddCUDA},
	})
}

func gatherCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.in[0].shape[1], n.in[0].shape[0]
	return b.kernel(layerSrc, "gt_gather", n.size, b.out(), b.in(0), b.in(1), n.size, d, rows, b.check(n.in[1], rows, false))
}

func scatterAddCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.shape[1], n.shape[0]
	return b.kernel(layerSrc, "gt_scatter_add", d, b.out(), b.in(0), b.in(1), n.in[0].size, d, rows, b.check(n.in[0], rows, false))
}
