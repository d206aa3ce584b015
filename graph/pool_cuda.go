//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opMaxPool:     {plan: maxPoolCUDA, aux: true},
		opMaxPoolGrad: {plan: maxPoolGradCUDA},
		opAvgPool:     {plan: windowCUDA("gt_avg_pool")},
		opAvgPoolGrad: {plan: windowCUDA("gt_avg_pool_grad")},
	})
	addCUDASource("pool", poolSrc)
}

func maxPoolCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_max_pool", n.size, b.out(), b.auxOf(n), b.in(0), n.size, b.window(n.win))
}

func maxPoolGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_max_pool_grad", n.size, b.out(), b.auxOf(n.in[0]), b.in(1), n.size, b.window(n.win))
}

// poolSrc holds the kernels of the pooling ops and their gradients, one
// thread per output element, the window's geometry as convSrc reads it.
const poolSrc = `
// out_range sets [lo, hi] to the outputs along one axis whose window covers
// input position p (k the window, s the stride, pad the padding before).
DEVICE void out_range(long long p, long long k, long long s, long long pad, long long n, long long *lo, long long *hi) {
	long long t = p + pad, a = t - k + 1;
	*lo = a <= 0 ? 0 : (a + s - 1) / s;
	*hi = t / s;
	if (*hi > n - 1) *hi = n - 1;
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
`
