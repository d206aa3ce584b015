package gpt

import (
	"math"
	"strings"
	"testing"
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
	short := Bench(50) // shorter than its warm-up: it only warms up
	tests := []struct {
		name string
		s    Schedule
	}{
		{"bench", Bench(2000)},
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
	if err := Bench(10).Validate(); err != nil {
		t.Errorf("Bench(10).Validate() = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Bench(10)
			tt.edit(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}
