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
}

// bcastGeo puts the bcastDims index space of shape and operands in n's
// slot, as the kernels of elemSrc read it: dims, then each operand's
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
		return b.kernel(elemKernels, "gt_bcast", n.size, b.out(), b.in(0), b.in(1), n.size, r, geo, op)
	}
}

func sumToCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.in[0].shape, n.shape)
	if err != nil {
		return nil, err
	}
	return b.kernel(elemKernels, "gt_sum_to", n.size, b.out(), b.in(0), n.size, r, geo, b.doubles(n.factor))
}

func broadcastToCUDA(b *devBuilder, n *Node) (func() error, error) {
	r, geo, err := b.bcastGeo(n.shape, n.in[0].shape)
	if err != nil {
		return nil, err
	}
	return b.kernel(elemKernels, "gt_broadcast_to", n.size, b.out(), b.in(0), n.size, r, geo, b.doubles(n.factor))
}

func broadcastScalarCUDA(b *devBuilder, n *Node) (func() error, error) {
	return b.kernel(elementwise, "gt_broadcast_scalar", n.size, b.out(), b.in(0), n.size, b.doubles(n.factor))
}

func broadcastAxisCUDA(b *devBuilder, n *Node) (func() error, error) {
	_, d, inner := axisSplit(n.shape, n.axis)
	return b.kernel(elementwise, "gt_broadcast_axis", n.size, b.out(), b.in(0), n.size, d, inner, b.doubles(n.factor))
}
