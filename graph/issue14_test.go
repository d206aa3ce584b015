package graph_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/memlimit"
)

// TestIssue14Same: Same tells the graphs of one step function traced twice
// from graphs that compute something else.
func TestIssue14Same(t *testing.T) {
	w := graph.NewVariable("w", []int{3, 2}, graph.Float32, nil)
	other := graph.NewVariable("w", []int{3, 2}, graph.Float32, nil)
	build := func(v *graph.Variable, scale float64, act graph.Activation) *graph.Graph {
		g := graph.New(graph.Float32)
		x := g.Placeholder("x", 4, 3)
		graph.Scale(graph.Sum(graph.Activate(graph.MatMul(x, g.Var(v)), act)), scale)
		return g
	}
	base := build(w, 2, graph.ReLU)
	tests := []struct {
		name string
		g    *graph.Graph
		want bool
	}{
		{"same-steps", build(w, 2, graph.ReLU), true},
		{"other-constant", build(w, 3, graph.ReLU), false},
		{"other-activation", build(w, 2, graph.Tanh), false},
		{"other-variable", build(other, 2, graph.ReLU), false},
		{"float64", func() *graph.Graph {
			g := graph.New(graph.Float64)
			g.Placeholder("x", 4, 3)
			return g
		}(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := base.Same(tt.g); got != tt.want {
				t.Errorf("Same = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestIssue14CompileMemory: a program whose buffers would not fit in the
// machine's memory is an error from Compile naming the largest buffer's node
// and shape, not "fatal error: out of memory" (issue 14 item 10). The
// activations are 4 TiB and more, so the test holds on any machine whose
// memory can be read; nothing that large is allocated.
func TestIssue14CompileMemory(t *testing.T) {
	if memlimit.Bytes() == 0 {
		t.Skip("this machine's memory cannot be read")
	}
	tests := []struct {
		name string
		dt   graph.DType
		want string
	}{
		{"float32", graph.Float32, "graph: compile: not enough memory: wide/dense_2 of shape [1048576 1048576] and 1 other buffers: needs 4.0 TiB, more than this machine's "},
		{"float64", graph.Float64, "graph: compile: not enough memory: wide/dense_2 of shape [1048576 1048576] and 1 other buffers: needs 8.0 TiB, more than this machine's "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := graph.NewVariable("w", []int{1, 1 << 20}, tt.dt, nil)
			g := graph.New(tt.dt)
			x := g.Placeholder("x", 1<<20, 1)
			g.SetScope("wide")
			y := graph.Dense(x, g.Var(w), nil, graph.ReLU)
			p, err := g.Compile(y)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, graph.ErrMemory) || !errors.Is(err, data.ErrMemory) {
				t.Fatalf("Compile error\n got %v\nwant %s... wrapping graph.ErrMemory and data.ErrMemory", err, tt.want)
			}
			if p != nil {
				t.Errorf("Compile returned a program with its error")
			}
		})
	}
	// A program that fits still compiles.
	g := graph.New(graph.Float32)
	if _, err := g.Compile(graph.Sum(g.Placeholder("x", 1024, 1024))); err != nil {
		t.Errorf("Compile of 4 MiB of buffers: %v", err)
	}
}
