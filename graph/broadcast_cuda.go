//go:build cuda

package graph

import (
	"fmt"

	"github.com/gotrain/gotrain/gpu"
)

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opBroadcastScalar: {plan: broadcastScalarCUDA},
		opBroadcastAxis:   {plan: broadcastAxisCUDA},
		opSumTo:           {plan: sumToCUDA},
		opBroadcastTo:     {plan: broadcastToCUDA},
	})
	addCUDASource("broadcast", broadcastSrc)
}

// bcastGeo puts the bcastDims index space of shape and operands in n's
// slot, as broadcastSrc and compareSrc read it: dims, then each operand's
// strides. It returns the number of axes and the geometry's address.
// It fails when the merged axes do not fit in the slot.
func (b *devBuilder) bcastGeo(shape []int, operands ...[]int) (int, gpu.Ptr, error) {
	dims, strides := bcastDims(shape, operands...)
	r := len(dims)
	if need := r * (1 + len(operands)); b.used+need > slotWords-1 {
		return 0, 0, fmt.Errorf("want at most %d axes after merging broadcast axes on a device, got %d for shape %v: %w",
			(slotWords-1-b.used)/(1+len(operands)), r, shape, ErrShape)
	}
	vals := dims
	for _, s := range strides {
		vals = append(vals, s...)
	}
	return r, b.ints(vals...), nil
}

// bcastCUDA is binaryKernel in any mode through gt_bcast, for op 0 add,
// 1 sub, 2 mul, 3 div, 4 maximum, 5 minimum, 6 greater, 7 greater_equal,
// 8 less, 9 less_equal, 10 equal (gt_bcast's switch).
func bcastCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		r, geo, err := b.bcastGeo(n.shape, n.in[0].shape, n.in[1].shape)
		if err != nil {
			return nil, err
		}
		return b.kernel("gt_bcast", n.size, b.out(), b.in(0), b.in(1), n.size, r, geo, op)
	}
}

func sumToCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.in[0].shape, n.shape)
	if err != nil {
		return nil, err
	}
	return b.kernel("gt_sum_to", n.size, b.out(), b.in(0), n.size, r, geo, b.doubles(n.factor))
}

func broadcastToCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.shape, n.in[0].shape)
	if err != nil {
		return nil, err
	}
	return b.kernel("gt_broadcast_to", n.size, b.out(), b.in(0), n.size, r, geo, b.doubles(n.factor))
}

func broadcastScalarCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_broadcast_scalar", n.size, b.out(), b.in(0), n.size, b.doubles(n.factor))
}

func broadcastAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.shape, n.axis)
	return b.kernel("gt_broadcast_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}

// broadcastSrc holds the kernels of the broadcasting ops and the general
// broadcast of the binary ops. A broadcast's geometry g is bcastDims' index
// space as devBuilder.bcastGeo lays it out: r dims, then r strides per
// operand.
const broadcastSrc = `
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
`
