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
		return b.kernel(elementwise, "gt_binary", n.size, b.out(), b.in(0), b.in(1), n.size, ka, la, kb, lb, op)
	}
}

// unaryCUDA is the elementwise ops of one input: 0 scale, 1 neg, 2 exp,
// 3 log, 4 square, 5 sqrt, 6 maximum.
func unaryCUDA(op int) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel(elementwise, "gt_unary", n.size, b.out(), b.in(0), n.size, op, b.doubles(n.factor))
	}
}
