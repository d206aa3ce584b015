//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opMaxElem:      {plan: bcastCUDA(4)},
		opMinElem:      {plan: bcastCUDA(5)},
		opGreater:      {plan: bcastCUDA(6)},
		opGreaterEqual: {plan: bcastCUDA(7)},
		opLess:         {plan: bcastCUDA(8)},
		opLessEqual:    {plan: bcastCUDA(9)},
		opEqual:        {plan: bcastCUDA(10)},
		opWhere:        {plan: whereCUDA},
	})
}

func whereCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.shape, n.in[0].shape, n.in[1].shape, n.in[2].shape)
	if err != nil {
		return nil, err
	}
	return b.kernel(elemKernels, "gt_where", n.size, b.out(), b.in(0), b.in(1), b.in(2), n.size, r, geo)
}
