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
	addCUDASource("softmax", softmaxSrc)
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
		return b.kernel("gt_softmax", n.size/c, b.out(), b.in(0), n.size/c, c, lg)
	}
}

func softmaxGradCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		c := n.shape[len(n.shape)-1]
		if c == 0 {
			return func() error { return nil }, nil
		}
		return b.kernel(name, n.size/c, b.out(), b.in(0), b.in(1), n.size/c, c)
	}
}

// softmaxAxisCUDA is softmaxStrided, one thread per row x[o,·,i].
func softmaxAxisCUDA(log int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		outer, d, inner := axisSplit(n.shape, n.axis)
		return b.kernel("gt_softmax_axis", outer*inner, b.out(), b.in(0), outer*inner, d, inner, log)
	}
}

// softmaxAxisGradCUDA is softmaxGradStrided, one thread per row.
func softmaxAxisGradCUDA(log int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		outer, d, inner := axisSplit(n.shape, n.axis)
		return b.kernel("gt_softmax_axis_grad", outer*inner, b.out(), b.in(0), b.in(1), outer*inner, d, inner, log)
	}
}

// softmaxSrc holds the kernels of the softmax ops, over the last axis one
// thread per row, over any axis one thread per output column.
const softmaxSrc = `
// gt_softmax is softmaxRows (lg: log softmax), in double; keep in sync.
KERNEL void gt_softmax(T *out, const T *x, long long rows, long long c, long long lg) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	softmax_row(out + r * c, x + r * c, c, lg);
}
KERNEL void gt_softmax_grad(T *out, const T *y, const T *dy, long long rows, long long c) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	softmax_grad_row(out + r * c, y + r * c, dy + r * c, c);
}
KERNEL void gt_log_softmax_grad(T *out, const T *y, const T *dy, long long rows, long long c) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	const T *yr = y + r * c, *dr = dy + r * c;
	double s = 0;
	for (long long j = 0; j < c; j++) s += (double)dr[j];
	for (long long j = 0; j < c; j++) out[r * c + j] = (T)((double)dr[j] - exp((double)yr[j]) * s);
}
// gt_softmax_axis is softmaxStrided (lg: log softmax), one thread per row.
KERNEL void gt_softmax_axis(T *out, const T *x, long long rows, long long d, long long inner, long long lg) {
	long long e = GLOBAL_INDEX;
	if (e >= rows) return;
	long long base = (e / inner) * d * inner + e % inner;
	double mx = GT_NEG_INF;
	for (long long k = 0; k < d; k++) mx = max_d(mx, (double)x[base + k * inner]);
	double s = 0;
	for (long long k = 0; k < d; k++) {
		double ex = exp((double)x[base + k * inner] - mx);
		s += ex;
		if (!lg) out[base + k * inner] = (T)ex;
	}
	if (lg) {
		double lse = mx + log(s);
		for (long long k = 0; k < d; k++) out[base + k * inner] = (T)((double)x[base + k * inner] - lse);
	} else {
		double inv = 1 / s;
		for (long long k = 0; k < d; k++) out[base + k * inner] = (T)((double)out[base + k * inner] * inv);
	}
}
// gt_softmax_axis_grad is softmaxGradStrided (lg: log softmax's).
KERNEL void gt_softmax_axis_grad(T *out, const T *y, const T *dy, long long rows, long long d, long long inner, long long lg) {
	long long e = GLOBAL_INDEX;
	if (e >= rows) return;
	long long base = (e / inner) * d * inner + e % inner;
	double s = 0;
	for (long long k = 0; k < d; k++) {
		long long j = base + k * inner;
		s += lg ? (double)dy[j] : (double)y[j] * (double)dy[j];
	}
	for (long long k = 0; k < d; k++) {
		long long j = base + k * inner;
		out[j] = lg ? (T)((double)dy[j] - exp((double)y[j]) * s) : (T)((double)y[j] * ((double)dy[j] - s));
	}
}
`
