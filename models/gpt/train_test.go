package gpt

import (
	"math"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// torchRate is lr_at of shared/bench/torch_gpt.py, the schedule the
// benchmark reproduces.
func torchRate(s Schedule, it int) float64 {
	if it < s.Warmup {
		return s.LR * float64(it+1) / float64(s.Warmup+1)
	}
	ratio := float64(it-s.Warmup) / float64(max(1, s.Iters-s.Warmup))
	return s.MinLR + 0.5*(1+math.Cos(math.Pi*min(1, ratio)))*(s.LR-s.MinLR)
}

func TestScheduleIsTorchGPTs(t *testing.T) {
	short := DefaultSchedule(50) // shorter than its warm-up: it only warms up
	tests := []struct {
		name string
		s    Schedule
	}{
		{"bench", DefaultSchedule(2000)},
		{"short", short},
		{"no warm-up", Schedule{Iters: 300, Batch: 1, LR: 3e-4, MinLR: 0, EvalEvery: 1, EvalIters: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.s.rate()
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			for it := range tt.s.Iters + 1 {
				got, want := r.Rate(it), torchRate(tt.s, it)
				if math.Abs(got-want) > 1e-15*want+1e-18 {
					t.Fatalf("rate at iteration %d = %.17g, torch_gpt.py's %.17g", it, got, want)
				}
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Schedule)
		want string
	}{
		{"iters", func(s *Schedule) { s.Iters = 0 }, "want Iters, Batch, EvalEvery and EvalIters ≥ 1, got 0, 12, 250 and 20"},
		{"warmup", func(s *Schedule) { s.Warmup = -1 }, "want Warmup ≥ 0, got -1"},
		{"rates", func(s *Schedule) { s.MinLR = 1 }, "want 0 ≤ MinLR ≤ LR and LR > 0, got MinLR 1 and LR 0.001"},
		{"decay", func(s *Schedule) { s.WeightDecay = math.NaN() }, "want WeightDecay ≥ 0, got NaN"},
	}
	if err := DefaultSchedule(10).Validate(); err != nil {
		t.Errorf("DefaultSchedule(10).Validate() = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSchedule(10)
			tt.edit(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestResidualInit: the projections into the residual stream start with
// σ = 0.02/√(2·Layers), the other matrices with 0.02, as torch_gpt.py's.
func TestResidualInit(t *testing.T) {
	st := strategy.NewMirrored(strategy.WithReplicas(1), strategy.WithDType(graph.Float64))
	defer st.Close()
	cfg := Config{Vocab: 50, Context: 16, Layers: 2, Heads: 2, Width: 64}
	var m *GPT
	st.Scope(func() { m, _ = New("g", cfg) })
	ids := data.NewTensor([]int{1, 16}, make([]float64, 16))
	st.Run(func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return m.Call(ctx, x, false) }, ids)
	want := map[string]float64{
		"g/block_1/attn/output/kernel": 0.01, "g/block_0/mlp/down/kernel": 0.01,
		"g/block_0/attn/query/kernel": 0.02, "g/block_1/mlp/up/kernel": 0.02, "g/tok/embeddings": 0.02,
	}
	seen := 0
	for _, v := range m.Variables() {
		sd, ok := want[v.Name()]
		if !ok {
			continue
		}
		seen++
		var ss float64
		vals := v.Value()
		for _, x := range vals {
			ss += x * x
		}
		if got := math.Sqrt(ss / float64(len(vals))); math.Abs(got-sd) > 0.1*sd {
			t.Errorf("%s: σ %.4f, want %.4f", v.Name(), got, sd)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the variables %v", seen, want)
	}
}
