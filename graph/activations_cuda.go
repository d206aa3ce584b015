//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opActivate: {plan: activateCUDA},
		opActGradY: {plan: actGradYCUDA},
		opActGradX: {plan: actGradXCUDA},
	})
	addCUDASource("activations", activationsSrc)
}

func activateCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_activate", n.size, b.out(), b.in(0), n.size, int(n.act))
}

func actGradYCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_act_grad_y", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}

func actGradXCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_act_grad_x", n.size, b.out(), b.in(0), b.in(1), n.size, int(n.act))
}

// activationsSrc holds the kernels of the activation op and its gradients,
// one thread per element.
const activationsSrc = `
KERNEL void gt_activate(T *out, const T *x, long long n, long long act) {
	long long i = GLOBAL_INDEX;
	if (i < n) out[i] = act_t(x[i], act);
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
`
