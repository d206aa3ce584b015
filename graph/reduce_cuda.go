//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opSum:             {plan: sumCUDA(false)},
		opMean:            {plan: sumCUDA(true)},
		opSumAxis:         {plan: sumAxisCUDA},
		opMaxAxis:         {plan: extremeAxisCUDA(0)},
		opMinAxis:         {plan: extremeAxisCUDA(1)},
		opExtremeAxisGrad: {plan: extremeAxisGradCUDA},
		opMaskedSum:       {plan: maskedSumCUDA},
		opMaskedSumGradX:  {plan: maskedSumGradXCUDA},
		opMaskedSumGradW:  {plan: maskedSumGradWCUDA},
	})
}

func sumCUDA(mean bool) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		x := n.in[0].size
		f := 1.0
		if mean && x > 0 {
			f = 1 / float64(x)
		}
		return b.kernel(reductions, "gt_sum", 1, b.out(), b.in(0), x, b.doubles(f))
	}
}

func sumAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.in[0].shape, n.axis)
	return b.kernel(reductions, "gt_sum_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}

// extremeAxisCUDA is extremeAxisKernel: 0 max, 1 min.
func extremeAxisCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		_, d, inner := axisSplit(n.in[0].shape, n.axis)
		return b.kernel(elemKernels, "gt_extreme_axis", n.size, b.out(), b.in(0), n.size, d, inner, op)
	}
}

func extremeAxisGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	outer, d, inner := axisSplit(n.shape, n.axis)
	return b.kernel(elemKernels, "gt_extreme_axis_grad", outer*inner, b.out(), b.in(0), b.in(1), b.in(2), outer*inner, d, inner)
}

func maskedSumCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.shape[0], n.in[1].size
	if c == 0 || rows == 0 {
		return b.kernel(elementwise, "gt_fill", n.size, b.out(), n.size, b.doubles(0))
	}
	return b.kernel(reductions, "gt_masked_sum", c, b.out(), b.in(0), b.in(1), c, n.in[0].size/rows, rows)
}

func maskedSumGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.in[0].size
	if c == 0 || rows == 0 {
		return func() error { return nil }, nil
	}
	return b.kernel(reductions, "gt_masked_sum_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, c, n.size/rows)
}

func maskedSumGradWCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.size
	per := 0
	if rows > 0 {
		per = n.in[0].size / rows
	}
	return b.kernel(reductions, "gt_masked_sum_grad_w", rows, b.out(), b.in(0), b.in(1), rows, max(c, 1), per)
}
