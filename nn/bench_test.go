package nn_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
)

// BenchmarkMLP is the reference workload through the whole stack
// (strategy.Run, Adam): 784-512-512-10, global batch 256, float32. Compare
// ms/step with PyTorch's torch_mlp.py, which scripts/bench.sh runs beside
// `gotrain bench mlp`.
func BenchmarkMLP(b *testing.B) {
	for _, r := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", r), func(b *testing.B) {
			sps, err := nn.BenchMLP(r, []int{784, 512, 512, 10}, 256, b.N, graph.Float32)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(sps, "samples/s")
			b.ReportMetric(256/sps*1e3, "ms/step")
		})
	}
}
