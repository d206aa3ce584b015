//go:build cuda

package graph

// The CUDA C sources of the ops' device kernels, in the kernel dialect of
// package gpu (gpu.Prelude; parameters are pointers and long long only,
// float scalars travel in a device buffer, one thread per element or row,
// no shared memory). Each source is compiled once per dtype: cudaHeader,
// with T defined as float or double, goes before it.
//
// Every kernel computes what its op's CPU kernel (in the op's family file)
// computes, in the same order and precision, so that the two
// agree to the bit wherever the CPU result does not depend on BLAS or on the
// math library: reductions that the CPU accumulates in float64 (sum, mean,
// softmax, the cross-entropies, masked sums) accumulate in double here, and
// those it accumulates in T (sum_axis, add_n, col2im, max-pool and scatter
// gradients) accumulate in T, each output element summing its terms in the
// CPU's order. NVRTC compiles with --fmad=false (gpu.Device.Compile) and the
// fakes with -ffp-contract=off, as the CPU kernels have no FMA.
// Keep in sync with the CPU kernels.

// cudaHeader holds helpers shared by the sources: Go's max and math.Max
// (NaN wins, +0 beats -0), the activations, and the error flag for a bad
// label or id. It follows the line that defines T.
const cudaHeader = `
#ifdef __CUDACC_RTC__
#define GT_NEG_INF (-__longlong_as_double(0x7ff0000000000000LL))
#else
#define GT_NEG_INF (-INFINITY)
#endif
#ifndef __CUDACC_RTC__
// The fake driver runs one thread at a time.
static inline int atomicMin(int *a, int v) { int o = *a; if (v < o) *a = v; return o; }
#endif
DEVICE T max_t(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == (T)0 ? a + b : a;
	return a > b ? a : b;
}
DEVICE double max_d(double a, double b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == 0.0 ? a + b : a;
	return a > b ? a : b;
}
DEVICE T sigmoid_t(T x) {
	if (x >= (T)0) return (T)(1.0 / (1.0 + exp(-(double)x)));
	double e = exp((double)x);
	return (T)(e / (1.0 + e));
}
// gelu_d and gelu_grad_d are loops.GELU and loops.GELUGrad in float64;
// keep in sync. The CPU's float32 loops evaluate Φ by a polynomial, to a
// few float32 ulps of these.
DEVICE double gelu_d(double x) { return 0.5 * x * (1.0 + erf(x / 1.4142135623730951)); }
DEVICE double gelu_grad_d(double x) {
	double cdf = 0.5 * (1.0 + erf(x / 1.4142135623730951));
	double pdf = exp(-0.5 * x * x) / sqrt(2.0 * 3.141592653589793);
	return cdf + x * pdf;
}
// gelu_tanh_d and silu_d and their derivatives are activations.go's.
DEVICE double gelu_tanh_d(double x) {
	return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
DEVICE double gelu_tanh_grad_d(double x) {
	double t = tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));
	return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x);
}
DEVICE double sigmoid_d(double x) {
	if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}
DEVICE double silu_d(double x) { return x * sigmoid_d(x); }
DEVICE double silu_grad_d(double x) {
	double s = sigmoid_d(x);
	return s * (1.0 + x * (1.0 - s));
}
// act_t is activate's act: 0 linear, 1 relu, 2 tanh, 3 sigmoid, 4 gelu,
// 5 gelu_tanh, 6 silu.
DEVICE T act_t(T v, long long act) {
	switch (act) {
	case 1: return max_t(v, (T)0);
	case 2: return (T)tanh((double)v);
	case 3: return sigmoid_t(v);
	case 4: return (T)gelu_d((double)v);
	case 5: return (T)gelu_tanh_d((double)v);
	case 6: return (T)silu_d((double)v);
	}
	return v;
}
// class_of returns label l as a class id in [0,c), or -1 (classOf).
DEVICE long long class_of(T l, long long c) {
	if (!(l >= (T)0 && l < (T)c)) return -1;
	long long k = (long long)l;
	return (T)k == l ? k : -1;
}
`

// elementwiseSrc: one thread per output element.
const elementwiseSrc = `
// at is an operand's index for output i: kind 0 the same, 1 a scalar, 2 a
// vector over the trailing axis of length len (bcast's modes).
DEVICE long long at(long long i, long long kind, long long len) {
	return kind == 0 ? i : (kind == 1 ? 0 : i % len);
}
// gt_binary is arithKernel for the modes other than bGeneral: op 0 add,
// 1 sub, 2 mul, 3 div.
KERNEL void gt_binary(T *out, const T *a, const T *b, long long n, long long ka, long long la,
		long long kb, long long lb, long long op) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T x = a[at(i, ka, la)], y = b[at(i, kb, lb)];
	switch (op) {
	case 0: out[i] = x + y; break;
	case 1: out[i] = x - y; break;
	case 2: out[i] = x * y; break;
	default: out[i] = x / y; break;
	}
}
// gt_unary: op 0 scale by c, 1 neg, 2 exp, 3 log, 4 square, 5 sqrt.
KERNEL void gt_unary(T *out, const T *x, long long n, long long op, const double *c) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T v = x[i];
	switch (op) {
	case 0: out[i] = (T)c[0] * v; break;
	case 1: out[i] = -v; break;
	case 2: out[i] = (T)exp((double)v); break;
	case 3: out[i] = (T)log((double)v); break;
	case 4: out[i] = v * v; break;
	default: out[i] = (T)sqrt((double)v); break;
	}
}
KERNEL void gt_activate(T *out, const T *x, long long n, long long act) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = act_t(x[i], act);
}
// gt_bias_act is biasAct after a dense layer's gemm (b null: no bias).
KERNEL void gt_bias_act(T *out, const T *b, long long n, long long cols, long long act) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T v = out[i];
	if (b) v = v + b[i % cols];
	out[i] = act_t(v, act);
}
KERNEL void gt_act_grad_y(T *out, const T *y, const T *dy, long long n, long long act) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T v = y[i];
	switch (act) {
	case 1: out[i] = v > (T)0 ? dy[i] : (T)0; break;
	case 2: out[i] = dy[i] * ((T)1 - v * v); break;
	case 3: out[i] = dy[i] * v * ((T)1 - v); break;
	default: out[i] = dy[i]; break;
	}
}
// gt_act_grad_x is actGradX: act 4 gelu, 5 gelu_tanh, 6 silu.
KERNEL void gt_act_grad_x(T *out, const T *x, const T *dy, long long n, long long act) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	double v = (double)x[i];
	out[i] = dy[i] * (T)(act == 5 ? gelu_tanh_grad_d(v) : act == 6 ? silu_grad_d(v) : gelu_grad_d(v));
}
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
KERNEL void gt_broadcast_scalar(T *out, const T *x, long long n, const double *f) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = (T)((double)x[0] * f[0]);
}
// gt_broadcast_axis is broadcastAxisLoop: out[o,k,i] = f·x[o,i].
KERNEL void gt_broadcast_axis(T *out, const T *x, long long n, long long d, long long inner, const double *f) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long i = e % inner, o = e / (d * inner);
	out[e] = (T)f[0] * x[o * inner + i];
}
KERNEL void gt_copy(T *out, const T *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = x[i];
}
KERNEL void gt_fill(T *out, long long n, const double *c) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = (T)c[0];
}
// gt_acc is one term of add_n: out += x.
KERNEL void gt_acc(T *out, const T *x, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = out[i] + x[i];
}
// gt_dropout_mask is dropoutMask; keep[0] is 1/(1-rate) in double.
DEVICE unsigned long long splitmix(unsigned long long z) {
	z += 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}
KERNEL void gt_dropout_mask(T *out, const T *step, long long n, unsigned long long thr,
		unsigned long long seed, unsigned long long stream, const double *keep) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	unsigned long long ctr = (unsigned long long)step[1] * 16777216ULL + (unsigned long long)step[0];
	unsigned long long key = splitmix(splitmix(splitmix(seed) ^ stream) ^ ctr);
	unsigned long long u = splitmix(key + (unsigned long long)i * 0x9E3779B97F4A7C15ULL) >> 11;
	out[i] = u >= thr ? (T)keep[0] : (T)0;
}
`

// reduceSrc: reductions to a scalar, over an axis and over masked rows.
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
`

// rowsSrc: softmax and the cross-entropies, one thread per row of c.
const rowsSrc = `
DEVICE double row_lse(const T *row, long long c) {
	double mx = GT_NEG_INF;
	for (long long j = 0; j < c; j++) mx = max_d(mx, (double)row[j]);
	double s = 0;
	for (long long j = 0; j < c; j++) s += exp((double)row[j] - mx);
	return mx + log(s);
}
// softmax_row is one row of softmaxRows (lg: log softmax), in double.
DEVICE void softmax_row(T *dst, const T *row, long long c, long long lg) {
	double mx = GT_NEG_INF;
	for (long long j = 0; j < c; j++) mx = max_d(mx, (double)row[j]);
	double s = 0;
	for (long long j = 0; j < c; j++) {
		double e = exp((double)row[j] - mx);
		s += e;
		if (!lg) dst[j] = (T)e;
	}
	if (lg) {
		double lse = mx + log(s);
		for (long long j = 0; j < c; j++) dst[j] = (T)((double)row[j] - lse);
	} else {
		double inv = 1 / s;
		for (long long j = 0; j < c; j++) dst[j] = (T)((double)dst[j] * inv);
	}
}
// softmax_grad_row is one row of softmaxGrad, Σ y⊙dy in the 4 lanes of
// loops.Dot (internal/loops/softmax.go).
DEVICE void softmax_grad_row(T *o, const T *yr, const T *dr, long long c) {
	double l[4] = {0, 0, 0, 0};
	long long n = c & ~3LL;
	for (long long j = 0; j < n; j++) l[j & 3] += (double)yr[j] * (double)dr[j];
	double s = (l[0] + l[1]) + (l[2] + l[3]);
	for (long long j = n; j < c; j++) s += (double)yr[j] * (double)dr[j];
	for (long long j = 0; j < c; j++) o[j] = (T)((double)yr[j] * ((double)dr[j] - s));
}
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
// gt_causal_softmax is causalSoftmax (attention.go): row r is the softmax of
// its first r % tq + tk - tq + 1 elements, then zeros; keep in sync.
KERNEL void gt_causal_softmax(T *out, const T *x, long long rows, long long tq, long long tk) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	long long n = r % tq + tk - tq + 1;
	softmax_row(out + r * tk, x + r * tk, n, 0);
	for (long long j = n; j < tk; j++) out[r * tk + j] = 0;
}
// gt_causal_softmax_grad is causalSoftmaxGradRows; keep in sync.
KERNEL void gt_causal_softmax_grad(T *out, const T *y, const T *dy, long long rows, long long tq, long long tk) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	long long n = r % tq + tk - tq + 1;
	softmax_grad_row(out + r * tk, y + r * tk, dy + r * tk, n);
	for (long long j = n; j < tk; j++) out[r * tk + j] = 0;
}
KERNEL void gt_log_softmax_grad(T *out, const T *y, const T *dy, long long rows, long long c) {
	long long r = GLOBAL_INDEX;
	if (r >= rows) return;
	const T *yr = y + r * c, *dr = dy + r * c;
	double s = 0;
	for (long long j = 0; j < c; j++) s += (double)dr[j];
	for (long long j = 0; j < c; j++) out[r * c + j] = (T)((double)dr[j] - exp((double)yr[j]) * s);
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

// layersSrc: the window ops and the table ops. A window's geometry g is
// {b, h, w, c, kh, kw, sh, sw, padT, padL, oh, ow, dh, dw} (type window).
const layersSrc = `
// out_range sets [lo, hi] to the outputs along one axis whose window covers
// input position p (k the window, s the stride, pad the padding before).
DEVICE void out_range(long long p, long long k, long long s, long long pad, long long n, long long *lo, long long *hi) {
	long long t = p + pad, a = t - k + 1;
	*lo = a <= 0 ? 0 : (a + s - 1) / s;
	*hi = t / s;
	if (*hi > n - 1) *hi = n - 1;
}
// gt_im2col is im2col, one thread per patch element.
KERNEL void gt_im2col(T *cols, const T *x, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11], k = kh * kw * c;
	long long row = e / k, col = e % k;
	long long ki = col / (kw * c), kj = (col / c) % kw, ch = col % c;
	long long b = row / (oh * ow), oy = (row / ow) % oh, ox = row % ow;
	long long iy = oy * sh - g[8] + ki * g[12], ix = ox * sw - g[9] + kj * g[13];
	cols[e] = (iy < 0 || iy >= h || ix < 0 || ix >= w) ? (T)0 : x[((b * h + iy) * w + ix) * c + ch];
}
// gt_col2im is col2im, one thread per image element summing its patch
// elements in patch-row order, as the CPU adds them: the window taps that
// reach (iy, ix) are visited from the last to the first, so the outputs
// they belong to come in ascending order.
KERNEL void gt_col2im(T *dx, const T *cols, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11], dh = g[12], dw = g[13], k = kh * kw * c;
	long long ch = e % c, ix = (e / c) % w, iy = (e / (c * w)) % h, b = e / (c * w * h);
	T s = 0;
	for (long long ki = kh - 1; ki >= 0; ki--) {
		long long ty = iy + g[8] - ki * dh;
		if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
		long long oy = ty / sh;
		for (long long kj = kw - 1; kj >= 0; kj--) {
			long long tx = ix + g[9] - kj * dw;
			if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
			long long ox = tx / sw;
			s = s + cols[((b * oh + oy) * ow + ox) * k + (ki * kw + kj) * c + ch];
		}
	}
	dx[e] = s;
}
// pool_span sets [*lo, *hi) to the input positions along one axis inside
// the image that output o's window covers (k the window, s the stride, pad
// the padding before, n the input length), and returns their count.
DEVICE long long pool_span(long long o, long long k, long long s, long long pad, long long n, long long *lo, long long *hi) {
	long long a = o * s - pad, b = a + k;
	*lo = a < 0 ? 0 : a;
	*hi = b > n ? n : b;
	if (*hi < *lo) *hi = *lo;
	return *hi - *lo;
}
// gt_avg_pool is avgPool, one thread per output element summing its
// window's pixels in the CPU's order.
KERNEL void gt_avg_pool(T *out, const T *x, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11];
	long long ch = e % c, ox = (e / c) % ow, oy = (e / (c * ow)) % oh, b = e / (c * ow * oh);
	long long y0, y1, x0, x1;
	long long cnt = pool_span(oy, kh, sh, g[8], h, &y0, &y1) * pool_span(ox, kw, sw, g[9], w, &x0, &x1);
	T s = 0;
	for (long long iy = y0; iy < y1; iy++)
		for (long long ix = x0; ix < x1; ix++)
			s = s + x[((b * h + iy) * w + ix) * c + ch];
	out[e] = cnt > 0 ? s / (T)cnt : s;
}
// gt_avg_pool_grad is avgPoolSpread, one thread per input element summing,
// in output order, dy/count of the windows that hold it.
KERNEL void gt_avg_pool_grad(T *dx, const T *dy, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11];
	long long ch = e % c, ix = (e / c) % w, iy = (e / (c * w)) % h, b = e / (c * w * h);
	long long oy0, oy1, ox0, ox1, lo, hi;
	out_range(iy, kh, sh, g[8], oh, &oy0, &oy1);
	out_range(ix, kw, sw, g[9], ow, &ox0, &ox1);
	T s = 0;
	for (long long oy = oy0; oy <= oy1; oy++) {
		long long ny = pool_span(oy, kh, sh, g[8], h, &lo, &hi);
		for (long long ox = ox0; ox <= ox1; ox++) {
			long long cnt = ny * pool_span(ox, kw, sw, g[9], w, &lo, &hi);
			s = s + dy[((b * oh + oy) * ow + ox) * c + ch] / (T)cnt;
		}
	}
	dx[e] = s;
}
// gt_max_pool is maxPool, one thread per output element; arg gets the
// index in x of the first maximum, -1 for a window with no pixel inside.
KERNEL void gt_max_pool(T *out, long long *arg, const T *x, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11];
	long long ch = e % c, ox = (e / c) % ow, oy = (e / (c * ow)) % oh, b = e / (c * ow * oh);
	long long x0 = ox * sw - g[9];
	long long kj0 = x0 < 0 ? -x0 : 0, kj1 = kw < w - x0 ? kw : w - x0;
	if (kj1 < kj0) kj1 = kj0;
	int first = 1;
	T best = 0;
	long long a = -1;
	for (long long ki = 0; ki < kh; ki++) {
		long long iy = oy * sh - g[8] + ki;
		if (iy < 0 || iy >= h) continue;
		for (long long kj = kj0; kj < kj1; kj++) {
			long long idx = ((b * h + iy) * w + x0 + kj) * c + ch;
			T v = x[idx];
			if (first || v > best) { best = v; a = idx; first = 0; }
		}
	}
	out[e] = best;
	arg[e] = a;
}
// gt_max_pool_grad routes dy to each window's argmax: one thread per input
// element sums, in output order, the dy of the windows whose argmax it is.
KERNEL void gt_max_pool_grad(T *dx, const long long *arg, const T *dy, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11];
	long long ch = e % c, ix = (e / c) % w, iy = (e / (c * w)) % h, b = e / (c * w * h);
	long long oy0, oy1, ox0, ox1;
	out_range(iy, kh, sh, g[8], oh, &oy0, &oy1);
	out_range(ix, kw, sw, g[9], ow, &ox0, &ox1);
	T s = 0;
	for (long long oy = oy0; oy <= oy1; oy++)
		for (long long ox = ox0; ox <= ox1; ox++) {
			long long i = ((b * oh + oy) * ow + ox) * c + ch;
			if (arg[i] == e) s = s + dy[i];
		}
	dx[e] = s;
}
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
