//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opCausalMask:        {plan: causalMaskCUDA},
		opCausalSoftmax:     {plan: causalSoftmaxCUDA("gt_causal_softmax")},
		opCausalSoftmaxGrad: {plan: causalSoftmaxCUDA("gt_causal_softmax_grad")},
	})
	addCUDASource("attention", attentionSrc)
}

// causalSoftmaxCUDA plans gt_causal_softmax (x) or its gradient (y, dy),
// one thread per row of tk.
func causalSoftmaxCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		r := len(n.shape)
		tq, tk := n.shape[r-2], n.shape[r-1]
		if n.size == 0 {
			return func() error { return nil }, nil
		}
		rows := n.size / tk
		args := []any{b.out(), b.in(0)}
		if len(n.in) == 2 {
			args = append(args, b.in(1))
		}
		return b.kernel(name, rows, append(args, rows, tq, tk)...)
	}
}

func causalMaskCUDA(b *devBuilder, n *Node) (func() error, error) {
	r := len(n.shape)
	tq, tk := n.shape[r-2], n.shape[r-1]
	return b.kernel("gt_causal_mask", n.size, b.out(), b.in(0), n.size, tq, tk, b.doubles(n.value))
}

// attentionSrc holds the kernels of the causal mask and softmax, one thread
// per element or row.
const attentionSrc = `
// gt_causal_mask is causalMask: out = x, with v[0] where j > i + tk - tq.
KERNEL void gt_causal_mask(T *out, const T *x, long long n, long long tq, long long tk, const double *v) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long j = e % tk, i = (e / tk) % tq;
	out[e] = j > i + tk - tq ? (T)v[0] : x[e];
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
`
