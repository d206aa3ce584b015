//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opCausalMask:        {plan: causalMaskCUDA},
		opCausalSoftmax:     {plan: causalSoftmaxCUDA("gt_causal_softmax")},
		opCausalSoftmaxGrad: {plan: causalSoftmaxCUDA("gt_causal_softmax_grad")},
	})
}

// causalSoftmaxCUDA plans gt_causal_softmax (x) or its gradient (y, dy),
// one thread per row of tk.
func causalSoftmaxCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		r := len(n.shape)
		tq, tk := n.shape[r-2], n.shape[r-1]
		if n.size == 0 {
			return func() error { return nil }, nil
		}
		rows := n.size / tk
		args := []any{b.out(), b.in(0)}
		if len(n.in) == 2 {
			args = append(args, b.in(1))
		}
		return b.kernel(rowKernels, name, rows, append(args, rows, tq, tk)...)
	}
}

func causalMaskCUDA(b *devBuilder, n *Node) (func() error, error) {
	r := len(n.shape)
	tq, tk := n.shape[r-2], n.shape[r-1]
	return b.kernel(shapeKernels, "gt_causal_mask", n.size, b.out(), b.in(0), n.size, tq, tk, b.doubles(n.value))
}
