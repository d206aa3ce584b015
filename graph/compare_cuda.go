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
	addCUDASource("compare", compareSrc)
}

func whereCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.shape, n.in[0].shape, n.in[1].shape, n.in[2].shape)
	if err != nil {
		return nil, err
	}
	return b.kernel("gt_where", n.size, b.out(), b.in(0), b.in(1), b.in(2), n.size, r, geo)
}

// compareSrc holds the kernels of Where, one thread per output element; the
// comparisons, max and min run broadcastSrc's gt_bcast.
const compareSrc = `
// gt_where is whereKernel.
KERNEL void gt_where(T *out, const T *c, const T *a, const T *b, long long n, long long r, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long ic = 0, ia = 0, ib = 0, rest = e;
	for (long long d = r - 1; d >= 0; d--) {
		long long i = rest % g[d];
		rest /= g[d];
		ic += i * g[r + d];
		ia += i * g[2 * r + d];
		ib += i * g[3 * r + d];
	}
	out[e] = c[ic] != (T)0 ? a[ia] : b[ib];
}
`
