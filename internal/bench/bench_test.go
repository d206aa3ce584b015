package bench_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/bench"
)

// BenchmarkMLP is the issue's reference workload through the whole stack
// (strategy.Run, Adam): 784-512-512-10, global batch 256, float32. Compare
// ms/step with PyTorch's torch_mlp.py, which scripts/bench.sh runs beside
// `gotrain bench mlp`.
func BenchmarkMLP(b *testing.B) {
	for _, r := range []int{1, 2} {
		b.Run(fmt.Sprintf("replicas=%d", r), func(b *testing.B) {
			sps, err := bench.MLP(r, []int{784, 512, 512, 10}, 256, b.N, graph.Float32)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(sps, "samples/s")
			b.ReportMetric(256/sps*1e3, "ms/step")
		})
	}
}

func TestMLP(t *testing.T) {
	sps, err := bench.MLP(2, []int{8, 16, 4}, 32, 3, graph.Float32)
	if err != nil || sps <= 0 {
		t.Errorf("MLP = %v, %v", sps, err)
	}
	if _, err := bench.MLP(0, []int{8, 4}, 32, 3, graph.Float32); err == nil || !strings.HasPrefix(err.Error(), "bench: MLP: ") {
		t.Errorf("MLP with 0 replicas: %v", err)
	}
}

func ExampleMLP() {
	samplesPerSec, err := bench.MLP(2, []int{784, 64, 10}, 64, 3, graph.Float32)
	fmt.Println(samplesPerSec > 0, err)
	// Output:
	// true <nil>
}
