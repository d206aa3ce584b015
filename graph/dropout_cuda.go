//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opDropoutMask: {plan: dropoutMaskCUDA},
	})
	addCUDASource("dropout", dropoutSrc)
}

func dropoutMaskCUDA(b *devBuilder, n *Node) (func() error, error) {
	thr := uint64(n.rate * (1 << 53))
	keep := b.doubles(1 / (1 - n.rate))
	return b.kernel("gt_dropout_mask", n.size, b.out(), b.in(0), n.size, thr, n.seed, n.stream, keep)
}

// dropoutSrc holds the kernels of the dropout mask, one thread per element.
const dropoutSrc = `
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
