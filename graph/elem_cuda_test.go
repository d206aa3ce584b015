//go:build cuda

package graph_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/graph"
)

// elemAwkwardCases are the ops of issue 22 at sizes that fill no launch
// block evenly, broadcasting across blocks.
func elemAwkwardCases() []opCase {
	one := func(f func(x *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0]) }
	}
	two := func(f func(a, b *graph.Node) *graph.Node) func(in []*graph.Node) *graph.Node {
		return func(in []*graph.Node) *graph.Node { return f(in[0], in[1]) }
	}
	pos := []func(*rand.Rand, int) float64{nil, positive}
	ints := []func(*rand.Rand, int) float64{small, small}
	cond := func(r *rand.Rand, _ int) float64 { return float64(r.IntN(2)) }
	return []opCase{
		{name: "add-bc-17x1x33-9x1", shapes: [][]int{{17, 1, 33}, {9, 1}}, build: two(graph.Add)},
		{name: "mul-bc-1x129-37x1", shapes: [][]int{{1, 129}, {37, 1}}, build: two(graph.Mul)},
		{name: "div-bc-37x129-37x1", shapes: [][]int{{37, 129}, {37, 1}}, gen: pos, build: two(graph.Div)},
		{name: "sub-bc-rank4-3x1x17x1-5x1x7", shapes: [][]int{{3, 1, 17, 1}, {5, 1, 7}}, build: two(graph.Sub)},
		{name: "maximum-bc-17x1x33-9x1", shapes: [][]int{{17, 1, 33}, {9, 1}}, build: two(graph.Maximum)},
		{name: "minimum-same-1031", shapes: [][]int{{1031}, {1031}}, build: two(graph.Minimum)},
		{name: "greater-ties-37x129-129", shapes: [][]int{{37, 129}, {129}}, gen: ints, diff: []bool{false, false}, build: two(graph.Greater)},
		{name: "less_equal-ties-37x1-1x129", shapes: [][]int{{37, 1}, {1, 129}}, gen: ints, diff: []bool{false, false}, build: two(graph.LessEqual)},
		{name: "equal-ties-263-1", shapes: [][]int{{263}, {1}}, gen: ints, diff: []bool{false, false}, build: two(graph.Equal)},
		{name: "where-37x1-37x129-129", shapes: [][]int{{37, 1}, {37, 129}, {129}},
			gen: []func(*rand.Rand, int) float64{cond, nil, nil}, diff: []bool{false, true, true},
			build: func(in []*graph.Node) *graph.Node { return graph.Where(in[0], in[1], in[2]) }},
		{name: "sum-axes-17x9x33-0,2-keep", shapes: [][]int{{17, 9, 33}},
			build: one(func(x *graph.Node) *graph.Node { return graph.SumAxes(x, true, 0, 2) })},
		{name: "sum-axes-17x9x33-all", shapes: [][]int{{17, 9, 33}}, build: one(func(x *graph.Node) *graph.Node { return graph.SumAxes(x, false) })},
		{name: "mean-axes-17x9x33-1", shapes: [][]int{{17, 9, 33}}, build: one(func(x *graph.Node) *graph.Node { return graph.MeanAxes(x, false, 1) })},
		{name: "max-axis-17x9x33-1", shapes: [][]int{{17, 9, 33}}, gen: []func(*rand.Rand, int) float64{distinct(17 * 9 * 33)},
			build: one(func(x *graph.Node) *graph.Node { return graph.MaxAxis(x, 1, false) })},
		{name: "min-axis-17x9x33-0-keep", shapes: [][]int{{17, 9, 33}}, gen: []func(*rand.Rand, int) float64{distinct(17 * 9 * 33)},
			build: one(func(x *graph.Node) *graph.Node { return graph.MinAxis(x, 0, true) })},
		{name: "max-axis-ties-37x129-1", shapes: [][]int{{37, 129}}, gen: []func(*rand.Rand, int) float64{small},
			build: one(func(x *graph.Node) *graph.Node { return graph.MaxAxis(x, -1, false) })},
		{name: "softmax-axis-17x9x33-1", shapes: [][]int{{17, 9, 33}}, build: one(func(x *graph.Node) *graph.Node { return graph.SoftmaxAxis(x, 1) })},
		{name: "log-softmax-axis-17x9x33-0", shapes: [][]int{{17, 9, 33}}, build: one(func(x *graph.Node) *graph.Node { return graph.LogSoftmaxAxis(x, 0) })},
		{name: "apply-gelu_tanh-silu-263", shapes: [][]int{{263}}, build: one(func(x *graph.Node) *graph.Node {
			return graph.Add(graph.GELUTanh.Apply(x), graph.SiLU.Apply(x))
		})},
		{name: "dense-silu-5x7x3", shapes: [][]int{{5, 7}, {7, 3}, {3}},
			build: func(in []*graph.Node) *graph.Node { return graph.Dense(in[0], in[1], in[2], graph.SiLU) }},
	}
}

// TestDeviceBroadcastAxes checks that a broadcast whose merged axes do not
// fit a step's parameter slot fails CompileOn with an ErrShape error
// instead of running wrong, and that the CPU runs it.
func TestDeviceBroadcastAxes(t *testing.T) {
	dev := device(t)
	var a, b []int
	for i := 0; i < 12; i++ {
		a, b = append(a, 2-i%2), append(b, 1+i%2)
	}
	g := graph.New(graph.Float32)
	sum := graph.Add(g.Placeholder("a", a...), g.Placeholder("b", b...))
	if _, err := g.Compile(sum); err != nil {
		t.Fatal(err)
	}
	p, err := g.CompileOn(dev, sum)
	if err == nil {
		p.Close()
		t.Fatal("CompileOn succeeded, want an error for 12 merged axes")
	}
	if !errors.Is(err, graph.ErrShape) || !strings.Contains(err.Error(), "want at most 10 axes after merging broadcast axes on a device, got 12") {
		t.Errorf("got %v, want an ErrShape error saying 10 axes fit and 12 were asked", err)
	}
}
