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
	addCUDASource("reduce", reduceSrc)
}

func sumCUDA(mean bool) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		x := n.in[0].size
		f := 1.0
		if mean && x > 0 {
			f = 1 / float64(x)
		}
		return b.kernel("gt_sum", 1, b.out(), b.in(0), x, b.doubles(f))
	}
}

func sumAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.in[0].shape, n.axis)
	return b.kernel("gt_sum_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}

// extremeAxisCUDA is extremeAxisKernel: 0 max, 1 min.
func extremeAxisCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		_, d, inner := axisSplit(n.in[0].shape, n.axis)
		return b.kernel("gt_extreme_axis", n.size, b.out(), b.in(0), n.size, d, inner, op)
	}
}

func extremeAxisGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	outer, d, inner := axisSplit(n.shape, n.axis)
	return b.kernel("gt_extreme_axis_grad", outer*inner, b.out(), b.in(0), b.in(1), b.in(2), outer*inner, d, inner)
}

func maskedSumCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.shape[0], n.in[1].size
	if c == 0 || rows == 0 {
		return b.kernel("gt_fill", n.size, b.out(), n.size, b.doubles(0))
	}
	return b.kernel("gt_masked_sum", c, b.out(), b.in(0), b.in(1), c, n.in[0].size/rows, rows)
}

func maskedSumGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.in[0].size
	if c == 0 || rows == 0 {
		return func() error { return nil }, nil
	}
	return b.kernel("gt_masked_sum_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, c, n.size/rows)
}

func maskedSumGradWCUDA(b *devBuilder, n *Node) (func() error, error) {
	c, rows := n.in[1].size, n.size
	per := 0
	if rows > 0 {
		per = n.in[0].size / rows
	}
	return b.kernel("gt_masked_sum_grad_w", rows, b.out(), b.in(0), b.in(1), rows, max(c, 1), per)
}

// reduceSrc holds the kernels of the reductions: to a scalar, over an axis,
// the extremes along an axis and over masked rows.
const reduceSrc = `
// gt_sum is sumScaled: one thread sums in the CPU's order, in double, so
// the result has the CPU's bits.
KERNEL void gt_sum(T *out, const T *x, long long n, const double *f) {
	if (GLOBAL_INDEX != 0) return;
	double s = 0;
	for (long long i = 0; i < n; i++) s += (double)x[i];
	out[0] = (T)(s * f[0]);
}
// gt_sum_axis is sumAxis: out[o,i] = f·Σₖ x[o,k,i], summed in T in k order.
KERNEL void gt_sum_axis(T *out, const T *x, long long n, long long d, long long inner, const double *fp) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long o = e / inner, i = e % inner;
	T s = 0, f = (T)fp[0];
	for (long long k = 0; k < d; k++) s = s + x[(o * d + k) * inner + i];
	if (f != (T)1) s = s * f;
	out[e] = s;
}
// gt_masked_sum is maskedSum: one thread per channel j.
KERNEL void gt_masked_sum(T *out, const T *x, const T *w, long long c, long long per, long long rows) {
	long long j = GLOBAL_INDEX;
	if (j >= c) return;
	double acc = 0;
	for (long long b = 0; b < rows; b++) {
		if (w[b] == (T)0) continue;
		double f = (double)w[b];
		for (long long r = 0; r < per; r += c) acc += f * (double)x[b * per + r + j];
	}
	out[j] = (T)acc;
}
KERNEL void gt_masked_sum_grad_x(T *dx, const T *w, const T *dy, long long n, long long c, long long per) {
	long long e = GLOBAL_INDEX;
	if (e < n) dx[e] = w[e / per] * dy[e % c];
}
KERNEL void gt_masked_sum_grad_w(T *dw, const T *x, const T *dy, long long rows, long long c, long long per) {
	long long b = GLOBAL_INDEX;
	if (b >= rows) return;
	double s = 0;
	for (long long r = 0; r < per; r += c)
		for (long long j = 0; j < c; j++) s += (double)x[b * per + r + j] * (double)dy[j];
	dw[b] = (T)s;
}
// gt_extreme_axis is extremeAxisKernel: op 0 max, 1 min, along the middle
// axis of [outer,d,inner], one thread per output element.
KERNEL void gt_extreme_axis(T *out, const T *x, long long n, long long d, long long inner, long long op) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long o = e / inner, i = e % inner;
	T v = x[o * d * inner + i];
	for (long long k = 1; k < d; k++) {
		T w = x[(o * d + k) * inner + i];
		v = op == 0 ? max_t(v, w) : min_t(v, w);
	}
	out[e] = v;
}
// gt_extreme_axis_grad is extremeAxisGradKernel, one thread per row.
KERNEL void gt_extreme_axis_grad(T *dx, const T *x, const T *y, const T *dy, long long rows, long long d, long long inner) {
	long long e = GLOBAL_INDEX;
	if (e >= rows) return;
	long long o = e / inner, i = e % inner;
	T m = y[e];
	int found = 0;
	for (long long k = 0; k < d; k++) {
		long long j = (o * d + k) * inner + i;
		T v = x[j];
		if (!found && (v == m || (v != v && m != m))) {
			dx[j] = dy[e];
			found = 1;
		} else {
			dx[j] = 0;
		}
	}
}
`
