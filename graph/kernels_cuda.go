//go:build cuda

package graph

// The shared part of the ops' CUDA C kernels, in the kernel dialect of
// package gpu (gpu.Prelude; parameters are pointers and long long only,
// float scalars travel in a device buffer, one thread per element or row,
// no shared memory). Each family's _cuda.go file holds its kernels' source;
// a device compiles them all as one module per dtype (cudaModule), after
// cudaHeader with T defined as float or double.
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
// 5 gelu_tanh, 6 silu (7, softmax, is a softmax node of its own and never
// reaches a kernel).
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
// min_t is Go's min: NaN wins, -0 beats +0.
DEVICE T min_t(T a, T b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == b) return a == (T)0 ? -(-a + -b) : a;
	return a < b ? a : b;
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
`
