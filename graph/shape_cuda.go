//go:build cuda

package graph

import (
	"slices"
)

// The CUDA kernels of the shape ops (shape.go); shapeSrc also holds the
// causal mask's (attention_cuda.go). They copy without arithmetic, so they
// give the CPU's bits.

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opTranspose: {plan: transposeCUDA, words: transposeWords},
		opSlice:     {plan: sliceCUDA},
		opSliceGrad: {plan: sliceGradCUDA},
		opConcat:    {plan: concatCUDA},
	})
	addCUDASource("shape", shapeSrc)
}

func transposeWords(n *Node) int { return 2 * len(n.shape) }

func transposeCUDA(b *devBuilder, n *Node) (func() error, error) {
	dims, strides := transposePlan(n.in[0].shape, n.perm)
	plan := b.ints(slices.Concat(dims, strides)...)
	return b.kernel("gt_transpose", n.size, b.out(), b.in(0), n.size, len(dims), plan)
}

func sliceCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.shape, n.axis)
	ds := n.in[0].shape[n.axis]
	return b.kernel("gt_axis_copy", n.size, b.out(), b.in(0), n.size, d, inner, ds, n.from, d, 0)
}

func sliceGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, dd, inner := axisSplit(n.shape, n.axis)
	dy := n.in[0]
	d := dy.shape[n.axis]
	place, err := b.kernel("gt_axis_copy", dy.size, b.out(), b.in(0), dy.size, d, inner, d, 0, dd, n.from)
	if err != nil {
		return nil, err
	}
	return seq(b.zero(), place), nil
}

// zero returns a step clearing n's buffer.
func (b *devBuilder) zero() func() error {
	s, out, words := b.d.s, b.out(), b.n.size*b.d.p.dt.size()/4
	if words == 0 {
		return func() error { return nil }
	}
	return func() error { return s.Memset32(out, 0, words) }
}

func concatCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, dd, inner := axisSplit(n.shape, n.axis)
	var fs []func() error
	from := 0
	for i, x := range n.in {
		d := x.shape[n.axis]
		f, err := b.kernel("gt_axis_copy", x.size, b.out(), b.in(i), x.size, d, inner, d, 0, dd, from)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
		from += d
	}
	return seq(fs...), nil
}

// shapeSrc: one thread per element written. Keep in sync with shape.go.
const shapeSrc = `
// gt_transpose is transpose: out[e] = x[Σ iₖ·strides[k]] for e's index
// (i₀, …) in dims; g holds the r dims, then the r strides.
KERNEL void gt_transpose(T *out, const T *x, long long n, long long r, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long src = 0, rest = e;
	for (long long k = r - 1; k >= 0; k--) {
		src += (rest % g[k]) * g[r + k];
		rest /= g[k];
	}
	out[e] = x[src];
}
// gt_axis_copy is axisCopy: dst[o, fd+k, i] = src[o, fs+k, i] for the n =
// outer·d·inner elements copied.
KERNEL void gt_axis_copy(T *dst, const T *src, long long n, long long d, long long inner,
		long long ds, long long fs, long long dd, long long fd) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long w = d * inner, o = e / w, r = e % w;
	dst[(o * dd + fd) * inner + r] = src[(o * ds + fs) * inner + r];
}
`
