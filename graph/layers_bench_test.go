package graph_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/blas"
)

// BenchmarkConvStep is one forward and backward pass of conv 3x3 (same) →
// ReLU → max-pool 2x2 on MNIST-shaped batches, one BLAS thread.
func BenchmarkConvStep(b *testing.B) {
	blas.SetThreads(1)
	for _, c := range []struct{ batch, cin, cout int }{{32, 1, 32}, {32, 32, 64}} {
		for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
			b.Run(fmt.Sprintf("b%d-%dto%d-%v", c.batch, c.cin, c.cout, dt), func(b *testing.B) {
				g := graph.New(dt)
				x := g.Placeholder("x", c.batch, 28, 28, c.cin)
				w := g.Var(graph.NewVariable("w", []int{3, 3, c.cin, c.cout}, dt, nil))
				bias := g.Var(graph.NewVariable("b", []int{c.cout}, dt, nil))
				y := graph.MaxPool2D(graph.Conv2D(x, w, bias, 1, 1, graph.Same, graph.ReLU), 2, 2, 2, 2, graph.Valid)
				grads := g.Gradients(graph.Sum(y), []*graph.Node{w, bias, x})
				p, err := g.Compile(grads...)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if err := p.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
