//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opActivate: {plan: activateCUDA},
		opActGradY: {plan: actGradYCUDA},
		opActGradX: {plan: actGradXCUDA},
	})
}

func activateCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_activate", n.size, b.out(), b.in(0), n.size, int(n.act))
}

func actGradYCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_act_grad_y", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}

func actGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_act_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}
