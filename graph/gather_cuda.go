//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opGather:     {plan: gatherCUDA},
		opScatterAdd: {plan: scatterAddCUDA},
	})
	addCUDASource("gather", gatherSrc)
}

func gatherCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.in[0].shape[1], n.in[0].shape[0]
	return b.kernel("gt_gather", n.size, b.out(), b.in(0), b.in(1), n.size, d, rows, b.check(n.in[1], rows, false))
}

func scatterAddCUDA(b *devBuilder, n *Node) (func() error, error) {
	d, rows := n.shape[1], n.shape[0]
	return b.kernel("gt_scatter_add", d, b.out(), b.in(0), b.in(1), n.in[0].size, d, rows, b.check(n.in[0], rows, false))
}

// gatherSrc holds the kernels of the table lookup and its gradient.
const gatherSrc = `
// gt_gather copies table rows by id; a bad id lowers flag[0] to its
// position.
KERNEL void gt_gather(T *out, const T *table, const T *ids, long long n, long long d, long long rows, int *flag) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long i = e / d;
	long long k = class_of(ids[i], rows);
	if (k < 0) { atomicMin(flag, (int)i); out[e] = 0; return; }
	out[e] = table[k * d + e % d];
}
// gt_scatter_add is Gather's gradient: one thread per column j sums the dy
// rows into their table rows in id order, as the CPU does.
KERNEL void gt_scatter_add(T *out, const T *ids, const T *dy, long long nids, long long d, long long rows, int *flag) {
	long long j = GLOBAL_INDEX;
	if (j >= d) return;
	for (long long k = 0; k < rows; k++) out[k * d + j] = 0;
	for (long long i = 0; i < nids; i++) {
		long long k = class_of(ids[i], rows);
		if (k < 0) { atomicMin(flag, (int)i); continue; }
		out[k * d + j] = out[k * d + j] + dy[i * d + j];
	}
}
`
