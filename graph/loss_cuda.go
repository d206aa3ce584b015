//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opSparseXent:      {plan: sparseXentCUDA},
		opSoftmaxXent:     {plan: softmaxXentCUDA},
		opSigmoidXent:     {plan: sigmoidXentCUDA},
		opSparseXentGrad:  {plan: sparseXentGradCUDA},
		opSoftmaxXentGrad: {plan: softmaxXentGradCUDA},
		opXentLabelGrad:   {plan: xentLabelGradCUDA},
		opSigmoidXentGrad: {plan: sigmoidXentGradCUDA},
	})
}

func sparseXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel(rowKernels, "gt_sparse_xent", rows, b.out(), b.in(0), b.in(1), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel(rowKernels, "gt_softmax_xent", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_sigmoid_xent", n.size, b.out(), b.in(0), b.in(1), n.size)
}

func sparseXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_sparse_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_softmax_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c)
}

func xentLabelGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel(rowKernels, "gt_xent_label_grad", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_sigmoid_xent_grad", n.size, b.out(), b.in(0), b.in(1), b.in(2), n.size)
}
