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
	addCUDASource("loss", lossSrc)
}

func sparseXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel("gt_sparse_xent", rows, b.out(), b.in(0), b.in(1), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.in[1].shape[1]
	return b.kernel("gt_softmax_xent", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_sigmoid_xent", n.size, b.out(), b.in(0), b.in(1), n.size)
}

func sparseXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel("gt_sparse_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c, b.check(n.in[0], c, true))
}

func softmaxXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel("gt_softmax_xent_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), rows, c)
}

func xentLabelGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.shape[0], n.shape[1]
	return b.kernel("gt_xent_label_grad", rows, b.out(), b.in(0), b.in(1), rows, c)
}

func sigmoidXentGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_sigmoid_xent_grad", n.size, b.out(), b.in(0), b.in(1), b.in(2), n.size)
}

// lossSrc holds the kernels of the cross-entropies: the sigmoid's one thread
// per element, the softmax's one per row of c.
const lossSrc = `
KERNEL void gt_sigmoid_xent(T *out, const T *z, const T *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	double xf = (double)x[i];
	out[i] = (T)(max_d(xf, 0.0) - xf * (double)z[i] + log1p(exp(-fabs(xf))));
}
KERNEL void gt_sigmoid_xent_grad(T *out, const T *z, const T *x, const T *dl, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = (sigmoid_t(x[i]) - z[i]) * dl[i];
}
DEVICE double row_lse(const T *row, long long c) {
	double mx = GT_NEG_INF;
	for (long long j = 0; j < c; j++) mx = max_d(mx, (double)row[j]);
	double s = 0;
	for (long long j = 0; j < c; j++) s += exp((double)row[j] - mx);
	return mx + log(s);
}
// gt_sparse_xent is sparseXent; a bad label leaves its row and lowers
// flag[0] to the row (the first bad row, as the CPU reports it).
KERNEL void gt_sparse_xent(T *out, const T *lab, const T *x, long long rows, long long c, int *flag) {
	long long i = GLOBAL_INDEX;
	if (i >= rows) return;
	long long k = class_of(lab[i], c);
	if (k < 0) { atomicMin(flag, (int)i); return; }
	const T *row = x + i * c;
	out[i] = (T)(row_lse(row, c) - (double)row[k]);
}
KERNEL void gt_sparse_xent_grad(T *out, const T *lab, const T *x, const T *dl, long long rows, long long c, int *flag) {
	long long i = GLOBAL_INDEX;
	if (i >= rows) return;
	long long k = class_of(lab[i], c);
	if (k < 0) { atomicMin(flag, (int)i); return; }
	const T *row = x + i * c;
	T *o = out + i * c;
	double lse = row_lse(row, c), d = (double)dl[i];
	for (long long j = 0; j < c; j++) o[j] = (T)(exp((double)row[j] - lse) * d);
	o[k] = o[k] - (T)d;
}
KERNEL void gt_softmax_xent(T *out, const T *lab, const T *x, long long rows, long long c) {
	long long i = GLOBAL_INDEX;
	if (i >= rows) return;
	const T *row = x + i * c, *l = lab + i * c;
	double lse = row_lse(row, c), s = 0;
	for (long long j = 0; j < c; j++) s += (double)l[j] * (lse - (double)row[j]);
	out[i] = (T)s;
}
KERNEL void gt_softmax_xent_grad(T *out, const T *lab, const T *x, const T *dl, long long rows, long long c) {
	long long i = GLOBAL_INDEX;
	if (i >= rows) return;
	const T *row = x + i * c, *l = lab + i * c;
	double lse = row_lse(row, c), sl = 0, d = (double)dl[i];
	for (long long j = 0; j < c; j++) sl += (double)l[j];
	for (long long j = 0; j < c; j++) out[i * c + j] = (T)((exp((double)row[j] - lse) * sl - (double)l[j]) * d);
}
KERNEL void gt_xent_label_grad(T *out, const T *x, const T *dl, long long rows, long long c) {
	long long i = GLOBAL_INDEX;
	if (i >= rows) return;
	const T *row = x + i * c;
	double lse = row_lse(row, c), d = (double)dl[i];
	for (long long j = 0; j < c; j++) out[i * c + j] = (T)((lse - (double)row[j]) * d);
}
`
