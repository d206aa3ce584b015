package graph_test

import (
	"testing"

	"github.com/gotrain/gotrain/graph"
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
