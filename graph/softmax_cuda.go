//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opSoftmax:            {plan: softmaxCUDA(false)},
		opLogSoftmax:         {plan: softmaxCUDA(true)},
		opSoftmaxGrad:        {plan: softmaxGradCUDA("gt_softmax_grad")},
		opLogSoftmaxGrad:     {plan: softmaxGradCUDA("gt_log_softmax_grad")},
		opSoftmaxAxis:        {plan: softmaxAxisCUDA(0)},
		opLogSoftmaxAxis:     {plan: softmaxAxisCUDA(1)},
		opSoftmaxAxisGrad:    {plan: softmaxAxisGradCUDA(0)},
		opLogSoftmaxAxisGrad: {plan: softmaxAxisGradCUDA(1)},
	})
}

func softmaxCUDA(log bool) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		c := n.shape[len(n.shape)-1]
		if c == 0 {
			return func() error { return nil }, nil
		}
		lg := 0
		if log {
			lg = 1
		}
		return b.kernel(rowKernels, "gt_softmax", n.size/c, b.out(), b.in(0), n.size/c, c, lg)
	}
}

func softmaxGradCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		c := n.shape[len(n.shape)-1]
		if c == 0 {
			return func() error { return nil }, nil
		}
		return b.kernel(rowKernels, name, n.size/c, b.out(), b.in(0), b.in(1), n.size/c, c)
	}
}

// softmaxAxisCUDA is softmaxStrided, one thread per row x[o,·,i].
func softmaxAxisCUDA(log int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		outer, d, inner := axisSplit(n.shape, n.axis)
		return b.kernel(elemKernels, "gt_softmax_axis", outer*inner, b.out(), b.in(0), outer*inner, d, inner, log)
	}
}

// softmaxAxisGradCUDA is softmaxGradStrided, one thread per row.
func softmaxAxisGradCUDA(log int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		outer, d, inner := axisSplit(n.shape, n.axis)
		return b.kernel(elemKernels, "gt_softmax_axis_grad", outer*inner, b.out(), b.in(0), b.in(1), outer*inner, d, inner, log)
	}
}
