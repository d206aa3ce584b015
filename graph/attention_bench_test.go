package graph_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/blas"
)

// BenchmarkAttention times causal attention at the small GPT's sizes (per
// replica batch 6 or 12, 4 heads, 64 positions, depth 32), float32, one
// BLAS thread: the forward pass alone, forward and backward (gradients of
// q, k and v), the six batched products of forward and backward alone (the
// floor a fused kernel doing the same products would approach), and the
// masked softmax of the weights alone; then SelfAttention forward and
// backward on the packed qkv [batch, t, 3·h·d], with no transposes.
func BenchmarkAttention(b *testing.B) {
	blas.SetThreads(1)
	const h, t, d = 4, 64, 32
	for _, batch := range []int{6, 12} {
		shape := []int{batch, h, t, d}
		for _, part := range []string{"fwd", "fwd+bwd", "products", "softmax", "self-fwd+bwd"} {
			b.Run(fmt.Sprintf("b%d-%s", batch, part), func(b *testing.B) {
				g := graph.New(graph.Float32)
				q, k, v := g.Placeholder("q", shape...), g.Placeholder("k", shape...), g.Placeholder("v", shape...)
				var outs []*graph.Node
				switch part {
				case "fwd":
					outs = []*graph.Node{graph.Attention(q, k, v, true)}
				case "fwd+bwd":
					loss := graph.Sum(graph.Attention(q, k, v, true))
					outs = g.Gradients(loss, []*graph.Node{q, k, v})
				case "products":
					w, dy := g.Placeholder("w", batch, h, t, t), g.Placeholder("dy", shape...)
					ds := g.Placeholder("ds", batch, h, t, t)
					outs = []*graph.Node{
						graph.BatchMatMul(q, k, false, true),   // scores
						graph.BatchMatMul(w, v, false, false),  // output
						graph.BatchMatMul(dy, v, false, true),  // d weights
						graph.BatchMatMul(w, dy, true, false),  // d v
						graph.BatchMatMul(ds, k, false, false), // d q
						graph.BatchMatMul(ds, q, true, false),  // d k
					}
				case "softmax":
					outs = []*graph.Node{graph.Softmax(graph.CausalMask(g.Placeholder("s", batch, h, t, t)))}
				case "self-fwd+bwd":
					q = g.Placeholder("qkv", batch, t, 3*h*d)
					outs = g.Gradients(graph.Sum(graph.SelfAttention(q, h, true)), []*graph.Node{q})
					k, v = q, q
				}
				p, err := g.Compile(outs...)
				if err != nil {
					b.Fatal(err)
				}
				r := rand.New(rand.NewPCG(1, 2))
				for _, n := range []*graph.Node{q, k, v} {
					buf := p.F32(n)
					for i := range buf {
						buf[i] = float32(r.NormFloat64())
					}
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
