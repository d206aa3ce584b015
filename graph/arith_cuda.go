//go:build cuda

package graph

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opAdd:    {plan: binaryCUDA(0)},
		opSub:    {plan: binaryCUDA(1)},
		opMul:    {plan: binaryCUDA(2)},
		opDiv:    {plan: binaryCUDA(3)},
		opScale:  {plan: unaryCUDA(0)},
		opNeg:    {plan: unaryCUDA(1)},
		opExp:    {plan: unaryCUDA(2)},
		opLog:    {plan: unaryCUDA(3)},
		opSquare: {plan: unaryCUDA(4)},
		opSqrt:   {plan: unaryCUDA(5)},
	})
	addCUDASource("arith", arithSrc)
}

// binaryCUDA is binaryKernel for op 0 add, 1 sub, 2 mul, 3 div; general
// broadcasts go to bcastCUDA.
func binaryCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		if n.mode == bGeneral {
			return bcastCUDA(op)(b, n)
		}
		la, lb := n.in[0].size, n.in[1].size
		ka, kb := 0, 0
		switch n.mode {
		case bScalarA:
			ka = 1
		case bScalarB:
			kb = 1
		case bVecA:
			ka = 2
		case bVecB:
			kb = 2
		}
		return b.kernel("gt_binary", n.size, b.out(), b.in(0), b.in(1), n.size, ka, la, kb, lb, op)
	}
}

// unaryCUDA is the elementwise ops of one input: 0 scale, 1 neg, 2 exp,
// 3 log, 4 square, 5 sqrt, 6 maximum.
func unaryCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel("gt_unary", n.size, b.out(), b.in(0), n.size, op, b.doubles(n.factor))
	}
}

// arithSrc holds the kernels of the arithmetic ops, one thread per output
// element.
const arithSrc = `
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
`
