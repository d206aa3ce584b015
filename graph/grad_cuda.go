//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opAddN: {plan: addNCUDA},
		opCopy: {plan: copyCUDA},
		opFill: {plan: fillCUDA},
	})
	addCUDASource("grad", gradSrc)
}

// addNCUDA is addNKernel: a copy of the first input, then each other added
// in turn, so the sums round as the CPU's do.
func addNCUDA(b *devBuilder, n *Node) (func() error, error) {
	first, err := b.kernel("gt_copy", n.size, b.out(), b.in(0), n.size)
	if err != nil {
		return nil, err
	}
	fs := []func() error{first}
	for i := 1; i < len(n.in); i++ {
		f, err := b.kernel("gt_acc", n.size, b.out(), b.in(i), n.size)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return seq(fs...), nil
}

func copyCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_copy", n.size, b.out(), b.in(0), n.size)
}

func fillCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel("gt_fill", n.size, b.out(), n.size, b.doubles(n.value))
}

// gradSrc holds the kernels of the ops Gradients builds itself, one thread
// per element.
const gradSrc = `
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
`
