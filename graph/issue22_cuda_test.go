//go:build cuda

package graph_test

import (
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// TestDeviceIssue22Ops runs the shape, product, normalization and
// attention ops at sizes that fill no launch block evenly, forward and
// backward, on the CPU and the device.
func TestDeviceIssue22Ops(t *testing.T) {
	bmm := func(ta, tb bool) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return graph.BatchMatMul(in[0], in[1], ta, tb) }
	}
	checkDeviceOps(t, device(t), []opCase{
		{name: "transpose-heads-3x17x5x33", shapes: [][]int{{3, 17, 5, 33}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0], 0, 2, 1, 3) }},
		{name: "transpose-7x5x3x9-2031", shapes: [][]int{{7, 5, 3, 9}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0], 2, 0, 3, 1) }},
		{name: "transpose-matrix-65x37", shapes: [][]int{{65, 37}},
			build: func(in []*graph.Node) *graph.Node { return graph.Transpose(in[0]) }},
		{name: "slice-37x65-3to50", shapes: [][]int{{37, 65}},
			build: func(in []*graph.Node) *graph.Node { return graph.Slice(in[0], 1, 3, 50) }},
		{name: "concat-axis1-5x(7,1,9)x3", shapes: [][]int{{5, 7, 3}, {5, 1, 3}, {5, 9, 3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Concat(1, in...) }},
		{name: "split-stack-9x33", shapes: [][]int{{9, 33}},
			build: func(in []*graph.Node) *graph.Node {
				p := graph.Split(in[0], 1, 11, 11, 11)
				return graph.Stack(1, p[2], p[0], p[1])
			}},
		{name: "batch_matmul-nt-2x3x17x33", shapes: [][]int{{2, 3, 17, 33}, {2, 3, 19, 33}}, build: bmm(false, true)},
		{name: "batch_matmul-nn-2x3x17x19", shapes: [][]int{{2, 3, 17, 19}, {2, 3, 19, 33}}, build: bmm(false, false)},
		{name: "batch_matmul-broadcast-tt", shapes: [][]int{{1, 3, 5, 9}, {4, 1, 7, 5}}, build: bmm(true, true)},
		{name: "batch_matmul-repeated-b-tn", shapes: [][]int{{3, 5, 9}, {5, 7}}, build: bmm(true, false)},
		{name: "batch_matmul-stacked-6x17x33x65", shapes: [][]int{{6, 17, 33}, {33, 65}}, build: bmm(false, false)},
		{name: "layer_norm-37x129", shapes: [][]int{{37, 129}, {129}, {129}},
			build: func(in []*graph.Node) *graph.Node { return graph.LayerNorm(in[0], in[1], in[2], 1e-5) }},
		{name: "rms_norm-3x5x257", shapes: [][]int{{3, 5, 257}, {257}},
			build: func(in []*graph.Node) *graph.Node { return graph.RMSNorm(in[0], in[1], 1e-6) }},
		{name: "causal_mask-softmax-3x17x33", shapes: [][]int{{3, 17, 33}},
			build: func(in []*graph.Node) *graph.Node { return graph.Softmax(graph.CausalMask(in[0])) }},
		{name: "attention-causal-2x3x17x9", shapes: [][]int{{2, 3, 17, 9}, {2, 3, 17, 9}, {2, 3, 17, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Attention(in[0], in[1], in[2], true) }},
		{name: "attention-causal-fewer-queries-2x3x5x9", shapes: [][]int{{2, 3, 5, 9}, {2, 3, 17, 9}, {2, 3, 17, 5}},
			build: func(in []*graph.Node) *graph.Node { return graph.Attention(in[0], in[1], in[2], true) }},
		{name: "self_attention-causal-2x17x(3x3x5)", shapes: [][]int{{2, 17, 45}},
			build: func(in []*graph.Node) *graph.Node { return graph.SelfAttention(in[0], 3, true) }},
		{name: "self_attention-3x9x(3x2x7)", shapes: [][]int{{3, 9, 42}},
			build: func(in []*graph.Node) *graph.Node { return graph.SelfAttention(in[0], 2, false) }},
	})
}
