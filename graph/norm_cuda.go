//go:build cuda

package graph

import "github.com/gotrain/gotrain/gpu"

// The CUDA kernels of the norm ops (norm.go). They compute in double in
// the CPU's order, so they give its bits.

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opNormStats:     {plan: normStatsCUDA},
		opNorm:          {plan: normCUDA},
		opNormGrad:      {plan: normGradCUDA},
		opNormGammaGrad: {plan: normGammaGradCUDA},
	})
	addCUDASource("norm", normSrc)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func normStatsCUDA(b *devBuilder, n *Node) (func() error, error) {
	x := n.in[0]
	rows, c := n.shape[0], x.shape[len(x.shape)-1]
	return b.kernel("gt_norm_stats", rows, b.out(), b.in(0), rows, c, boolInt(n.norm.rms), b.doubles(n.norm.eps))
}

func normCUDA(b *devBuilder, n *Node) (func() error, error) {
	var gamma, beta gpu.Ptr // null: none
	if n.norm.gamma {
		gamma = b.in(2)
	}
	if n.norm.beta {
		beta = b.in(len(n.in) - 1)
	}
	c := n.shape[len(n.shape)-1]
	return b.kernel("gt_norm", n.size, b.out(), b.in(0), b.in(1), gamma, beta, n.size, c)
}

func normGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	var gamma gpu.Ptr
	if n.norm.gamma {
		gamma = b.in(3)
	}
	rows, c := n.in[1].shape[0], n.shape[len(n.shape)-1]
	return b.kernel("gt_norm_grad", rows, b.out(), b.in(0), b.in(1), b.in(2), gamma, rows, c, boolInt(n.norm.rms))
}

func normGammaGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	rows, c := n.in[1].shape[0], n.size
	return b.kernel("gt_norm_gamma_grad", c, b.out(), b.in(0), b.in(1), b.in(2), rows, c)
}

// normSrc: the statistics and the gradient per row, the norm per element,
// dγ per column. Keep in sync with norm.go.
const normSrc = `
// row_stats is rowStats: the mean kept as two T, and 1/σ.
DEVICE void row_stats(const T *st, long long r, double *mean, double *rstd) {
	*mean = (double)st[3 * r] + (double)st[3 * r + 1];
	*rstd = (double)st[3 * r + 2];
}
// lane_sum, lane_sum_sq_dev and lane_grad_sums are loops.Sum,
// SumSqDev and NormGradSums (internal/loops/norm.go): 4 double lanes, lane k taking the elements j ≡ k (mod 4)
// of the longest prefix that is a multiple of 4, then (0 + 1) + (2 + 3),
// then the rest in order.
DEVICE double lane_sum(const T *row, long long c) {
	double s[4] = {0, 0, 0, 0};
	long long n = c & ~3LL;
	for (long long j = 0; j < n; j++) s[j & 3] += (double)row[j];
	double t = (s[0] + s[1]) + (s[2] + s[3]);
	for (long long j = n; j < c; j++) t += (double)row[j];
	return t;
}
DEVICE double lane_sum_sq_dev(const T *row, long long c, double mean) {
	double s[4] = {0, 0, 0, 0};
	long long n = c & ~3LL;
	for (long long j = 0; j < n; j++) {
		double d = (double)row[j] - mean;
		s[j & 3] += d * d;
	}
	double t = (s[0] + s[1]) + (s[2] + s[3]);
	for (long long j = n; j < c; j++) {
		double d = (double)row[j] - mean;
		t += d * d;
	}
	return t;
}
// grad_terms is internal/loops/norm.go's normGradTerms: g = dy·γ (dy where gamma is null) and g·x̂.
DEVICE void grad_terms(const T *row, const T *dr, const T *gamma, long long j, double mean, double rstd,
		double *g, double *gx) {
	double xh = ((double)row[j] - mean) * rstd;
	*g = (double)dr[j];
	if (gamma) *g *= (double)gamma[j];
	*gx = *g * xh;
}
DEVICE void lane_grad_sums(const T *row, const T *dr, const T *gamma, long long c, double mean, double rstd,
		double *sg, double *sgx) {
	double g[4] = {0, 0, 0, 0}, h[4] = {0, 0, 0, 0}, a, b;
	long long n = c & ~3LL;
	for (long long j = 0; j < n; j++) {
		grad_terms(row, dr, gamma, j, mean, rstd, &a, &b);
		g[j & 3] += a;
		h[j & 3] += b;
	}
	*sg = (g[0] + g[1]) + (g[2] + g[3]);
	*sgx = (h[0] + h[1]) + (h[2] + h[3]);
	for (long long j = n; j < c; j++) {
		grad_terms(row, dr, gamma, j, mean, rstd, &a, &b);
		*sg += a;
		*sgx += b;
	}
}
// gt_norm_stats is normStats, one thread per row.
KERNEL void gt_norm_stats(T *out, const T *x, long long rows, long long c, long long rms, const double *eps) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	const T *row = x + r * c;
	double mean = 0;
	if (!rms) mean = lane_sum(row, c) / (double)c;
	double ss = lane_sum_sq_dev(row, c, mean);
	T hi = (T)mean;
	out[3 * r] = hi;
	out[3 * r + 1] = (T)(mean - (double)hi);
	out[3 * r + 2] = (T)(1 / sqrt(ss / (double)c + eps[0]));
}
// gt_norm is normRows, one thread per element; gamma and beta are null
// where absent.
KERNEL void gt_norm(T *out, const T *x, const T *st, const T *gamma, const T *beta, long long n, long long c) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long j = e % c;
	double mean, rstd;
	row_stats(st, e / c, &mean, &rstd);
	double y = ((double)x[e] - mean) * rstd;
	if (gamma) y *= (double)gamma[j];
	if (beta) y += (double)beta[j];
	out[e] = (T)y;
}
// gt_norm_grad is normGradRows, one thread per row.
KERNEL void gt_norm_grad(T *out, const T *x, const T *st, const T *dy, const T *gamma, long long rows,
		long long c, long long rms) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	double mean, rstd;
	row_stats(st, r, &mean, &rstd);
	const T *row = x + r * c, *dr = dy + r * c;
	double sg, sgx;
	lane_grad_sums(row, dr, gamma, c, mean, rstd, &sg, &sgx);
	double mg = sg / (double)c, mgx = sgx / (double)c;
	if (rms) mg = 0;
	for (long long j = 0; j < c; j++) {
		double xh = ((double)row[j] - mean) * rstd, gj = (double)dr[j];
		if (gamma) gj *= (double)gamma[j];
		out[r * c + j] = (T)(rstd * (gj - mg - xh * mgx));
	}
}
// gt_norm_gamma_grad is normGammaGrad, one thread per column summing the
// rows in order.
KERNEL void gt_norm_gamma_grad(T *out, const T *x, const T *st, const T *dy, long long rows, long long c) {
	long long j = GLOBAL_INDEX;
	if (j >= c) return;
	double acc = 0;
	for (long long r = 0; r < rows; r++) {
		double mean, rstd;
		row_stats(st, r, &mean, &rstd);
		acc += (double)dy[r * c + j] * (((double)x[r * c + j] - mean) * rstd);
	}
	out[j] = (T)acc;
}
`
