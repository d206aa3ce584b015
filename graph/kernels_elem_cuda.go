//go:build cuda

package graph

// elemSrc holds the kernels of the element-wise and reduction ops of
// issue 22, in the dialect and with the header of kernels_cuda.go. A
// broadcast's geometry g is bcastDims' index space as devBuilder.bcastGeo
// lays it out: r dims, then r strides per operand. Each kernel computes
// what its CPU kernel computes, in the same order and precision.
// Keep in sync with broadcast.go, compare.go, reduce.go and softmax.go.
const elemSrc = `
// min_t is Go's min: NaN wins, -0 beats +0.
DEVICE T min_t(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == (T)0 ? -(-a + -b) : a;
	return a < b ? a : b;
}
// gt_bcast is binaryKernel: out[e] = op(a[ia], b[ib]), ia and ib the
// operands' elements broadcast to e. op: 0 add, 1 sub, 2 mul, 3 div,
// 4 maximum, 5 minimum, 6 greater, 7 greater_equal, 8 less, 9 less_equal,
// 10 equal.
KERNEL void gt_bcast(T *out, const T *a, const T *b, long long n, long long r, const long long *g, long long op) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long ia = 0, ib = 0, rest = e;
	for (long long d = r - 1; d >= 0; d--) {
		long long i = rest % g[d];
		rest /= g[d];
		ia += i * g[r + d];
		ib += i * g[2 * r + d];
	}
	T x = a[ia], y = b[ib];
	switch (op) {
	case 0: out[e] = x + y; break;
	case 1: out[e] = x - y; break;
	case 2: out[e] = x * y; break;
	case 3: out[e] = x / y; break;
	case 4: out[e] = max_t(x, y); break;
	case 5: out[e] = min_t(x, y); break;
	case 6: out[e] = x > y ? (T)1 : (T)0; break;
	case 7: out[e] = x >= y ? (T)1 : (T)0; break;
	case 8: out[e] = x < y ? (T)1 : (T)0; break;
	case 9: out[e] = x <= y ? (T)1 : (T)0; break;
	default: out[e] = x == y ? (T)1 : (T)0; break;
	}
}
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
// gt_sum_to is sumToKernel, one thread per output element: g is x's index
// space and the output's strides in it (0 along the summed axes). The
// thread adds its terms in x's element order, in double.
KERNEL void gt_sum_to(T *out, const T *x, long long n, long long r, const long long *g, const double *f) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	// x's stride along each axis, and the first element of e's terms.
	long long base = 0, terms = 1, rest = e, step = 1;
	for (long long d = r - 1; d >= 0; d--) {
		if (g[r + d] != 0) {
			long long i = rest % g[d];
			rest /= g[d];
			base += i * step;
		} else {
			terms *= g[d];
		}
		step *= g[d];
	}
	double s = 0;
	for (long long t = 0; t < terms; t++) {
		long long off = base, q = t, st = 1;
		for (long long d = r - 1; d >= 0; d--) {
			if (g[r + d] == 0) {
				off += (q % g[d]) * st;
				q /= g[d];
			}
			st *= g[d];
		}
		s += (double)x[off];
	}
	out[e] = (T)(s * f[0]);
}
// gt_broadcast_to is broadcastToKernel: out[e] = f·x[ix].
KERNEL void gt_broadcast_to(T *out, const T *x, long long n, long long r, const long long *g, const double *f) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long ix = 0, rest = e;
	for (long long d = r - 1; d >= 0; d--) {
		ix += (rest % g[d]) * g[r + d];
		rest /= g[d];
	}
	out[e] = (T)f[0] * x[ix];
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

// elemKernels is the CUDA C of the element-wise and reduction ops of
// issue 22 (kernels_elem_cuda.go).
var elemKernels = cudaSource{"elem", elemSrc}
