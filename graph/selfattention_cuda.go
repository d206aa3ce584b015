//go:build cuda

package graph

// The CUDA kernels of SelfAttention and its gradients (selfattention.go):
// batched cuBLAS calls whose block pointers address the heads in place in
// qkv and the output, as the CPU kernels' leading dimensions do, and the
// row softmax kernels run in place on the weights.

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opSelfAttnWeights:    {plan: selfAttnWeightsCUDA, words: selfAttnWords(1)},
		opSelfAttn:           {plan: selfAttnCUDA, words: selfAttnWords(1)},
		opSelfAttnScoresGrad: {plan: selfAttnScoresGradCUDA, words: selfAttnWords(1)},
		opSelfAttnGrad:       {plan: selfAttnGradCUDA, words: selfAttnWords(3)},
	})
}

// selfAttnOffsets returns, per block, the offsets of fn's block and of the
// blocks of a [..., heads, t, t] tensor.
func selfAttnOffsets(s selfAttnGeo, fn func(int) int) (offs, square []int) {
	offs, square = make([]int, s.blocks), make([]int, s.blocks)
	for i := range s.blocks {
		offs[i], square[i] = fn(i), i*s.t*s.t
	}
	return offs, square
}

// selfAttnWords is a cudaKernel.words: one batched call's pointers, three
// per block, for each of the op's products.
func selfAttnWords(products int) func(n *Node) int {
	return func(n *Node) int {
		w := n // the weights, [..., heads, t, t]
		switch n.op {
		case opSelfAttn:
			w = n.in[0]
		case opSelfAttnGrad:
			w = n.in[1]
		}
		return 3 * products * sizeOf(w.shape[:len(w.shape)-2])
	}
}

// rowSoftmax returns the launch of the softmax (or, with y set, its
// gradient) over the rows of the weights, in place in n's output, causal
// or not as n asks.
func (b *devBuilder) rowSoftmax(s selfAttnGeo, y *Node) (func() error, error) {
	rows := s.blocks * s.t
	args := []any{b.out()}
	if y != nil {
		args = append(args, b.d.bufs[y.id])
	}
	args = append(args, b.out(), rows)
	switch {
	case b.n.causal && y == nil:
		return b.kernel("gt_causal_softmax", rows, append(args, s.t, s.t)...)
	case b.n.causal:
		return b.kernel("gt_causal_softmax_grad", rows, append(args, s.t, s.t)...)
	case y == nil:
		return b.kernel("gt_softmax", rows, append(args, s.t, 0)...)
	}
	return b.kernel("gt_softmax_grad", rows, append(args, s.t)...)
}

func selfAttnWeightsCUDA(b *devBuilder, n *Node) (func() error, error) {
	s := selfAttnGeoOf(n.in[0], n)
	q, w := selfAttnOffsets(s, s.q)
	k, _ := selfAttnOffsets(s, s.k)
	scores, err := b.gemmBatched(false, true, s.t, s.t, s.d, s.scale, b.in(0), q, s.c, b.in(0), k, s.c, b.out(), w, s.t)
	if err != nil {
		return nil, err
	}
	softmax, err := b.rowSoftmax(s, nil)
	if err != nil {
		return nil, err
	}
	return seq(scores, softmax), nil
}

func selfAttnCUDA(b *devBuilder, n *Node) (func() error, error) {
	s := selfAttnGeoOf(n.in[1], n.in[0])
	v, w := selfAttnOffsets(s, s.v)
	y, _ := selfAttnOffsets(s, s.y)
	return b.gemmBatched(false, false, s.t, s.d, s.t, 1, b.in(0), w, s.t, b.in(1), v, s.c, b.out(), y, s.hd)
}

func selfAttnScoresGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	s := selfAttnGeoOf(n.in[0], n.in[1])
	y, w := selfAttnOffsets(s, s.y)
	v, _ := selfAttnOffsets(s, s.v)
	dw, err := b.gemmBatched(false, true, s.t, s.t, s.d, 1, b.in(2), y, s.hd, b.in(0), v, s.c, b.out(), w, s.t)
	if err != nil {
		return nil, err
	}
	grad, err := b.rowSoftmax(s, n.in[1])
	if err != nil {
		return nil, err
	}
	return seq(dw, grad), nil
}

func selfAttnGradCUDA(b *devBuilder, n *Node) (func() error, error) {
	s := selfAttnGeoOf(n.in[0], n.in[1])
	q, w := selfAttnOffsets(s, s.q)
	k, _ := selfAttnOffsets(s, s.k)
	v, _ := selfAttnOffsets(s, s.v)
	y, _ := selfAttnOffsets(s, s.y)
	qkv, ws, ds, dy, out := b.in(0), b.in(1), b.in(2), b.in(3), b.out()
	dq, err := b.gemmBatched(false, false, s.t, s.d, s.t, s.scale, ds, w, s.t, qkv, k, s.c, out, q, s.c)
	if err != nil {
		return nil, err
	}
	dk, err := b.gemmBatched(true, false, s.t, s.d, s.t, s.scale, ds, w, s.t, qkv, q, s.c, out, k, s.c)
	if err != nil {
		return nil, err
	}
	dv, err := b.gemmBatched(true, false, s.t, s.d, s.t, 1, ws, w, s.t, dy, y, s.hd, out, v, s.c)
	if err != nil {
		return nil, err
	}
	return seq(dq, dk, dv), nil
}
