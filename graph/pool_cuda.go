//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opMaxPool:     {plan: maxPoolCUDA, aux: true},
		opMaxPoolGrad: {plan: maxPoolGradCUDA},
		opAvgPool:     {plan: windowCUDA("gt_avg_pool")},
		opAvgPoolGrad: {plan: windowCUDA("gt_avg_pool_grad")},
	})
}

func maxPoolCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(layerSrc, "gt_max_pool", n.size, b.out(), b.auxOf(n), b.in(0), n.size, b.window(n.win))
}

func maxPoolGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(layerSrc, "gt_max_pool_grad", n.size, b.out(), b.auxOf(n.in[0]), b.in(1), n.size, b.window(n.win))
}
