package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gotrain/gotrain/nn"
)

func TestScheduleValues(t *testing.T) {
	cos := func(peak, alpha float64, d, n int) float64 {
		return peak * ((1-alpha)*0.5*(1+math.Cos(math.Pi*float64(d)/float64(n))) + alpha)
	}
	tests := []struct {
		name  string
		s     nn.Schedule
		steps []int
		want  []float64
	}{
		{"step-decay", nn.StepDecay{Initial: 0.1, Factor: 0.5, Every: 3},
			[]int{0, 1, 2, 3, 5, 6, 9}, []float64{0.1, 0.1, 0.1, 0.05, 0.05, 0.025, 0.0125}},
		{"exponential", nn.ExponentialDecay{Initial: 1, DecaySteps: 10, DecayRate: 0.5},
			[]int{0, 5, 10, 20}, []float64{1, math.Sqrt(0.5), 0.5, 0.25}},
		{"exponential-staircase", nn.ExponentialDecay{Initial: 1, DecaySteps: 10, DecayRate: 0.5, Staircase: true},
			[]int{0, 9, 10, 25}, []float64{1, 1, 0.5, 0.25}},
		{"cosine", nn.CosineDecay{Initial: 1, DecaySteps: 4},
			[]int{0, 1, 2, 4, 100}, []float64{1, cos(1, 0, 1, 4), 0.5, 0, 0}},
		{"cosine-alpha", nn.CosineDecay{Initial: 2, DecaySteps: 10, Alpha: 0.1},
			[]int{0, 5, 10, 11}, []float64{2, cos(2, 0.1, 5, 10), 0.2, 0.2}},
		{"cosine-warmup", nn.CosineDecay{Initial: 0, WarmupSteps: 4, WarmupTarget: 1, DecaySteps: 8},
			[]int{0, 1, 2, 3, 4, 8, 12, 50}, []float64{0, 0.25, 0.5, 0.75, 1, 0.5, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, step := range tt.steps {
				if got := tt.s.Rate(step); math.Abs(got-tt.want[i]) > 1e-12 {
					t.Errorf("Rate(%d) = %.15g, want %.15g", step, got, tt.want[i])
				}
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	bad := []interface{ Validate() error }{
		nn.StepDecay{Initial: 1, Factor: 0.5},
		nn.ExponentialDecay{Initial: 1, DecayRate: 0.5},
		nn.CosineDecay{Initial: 1, DecaySteps: 3, Alpha: 2},
		nn.CosineDecay{Initial: 1, DecaySteps: 3, WarmupSteps: -1},
	}
	for i, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("%d: %+v: Validate() = nil, want an error", i, s)
		}
	}
	good := []interface{ Validate() error }{
		nn.StepDecay{Initial: 1, Factor: 0.5, Every: 1},
		nn.ExponentialDecay{Initial: 1, DecayRate: 0.5, DecaySteps: 1},
		nn.CosineDecay{Initial: 1, DecaySteps: 3},
	}
	for i, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("%d: %v", i, err)
		}
	}
}

// TestRatesRejectedWhereSet: a learning rate that is not finite is refused
// by the constructor and by the schedules' Validate.
func TestRatesRejectedWhereSet(t *testing.T) {
	tests := []struct {
		name string
		fn   func()
		want string
	}{
		{"sgd-inf", func() { nn.NewSGD(math.Inf(1)) }, "nn: NewSGD: want a finite lr ≥ 0, got +Inf"},
		{"adam-nan", func() { nn.NewAdam(math.NaN()) }, "nn: NewAdam: want a finite lr ≥ 0, got NaN"},
		{"rmsprop-inf", func() { nn.NewRMSprop(math.Inf(1)) }, "nn: NewRMSprop: want a finite lr ≥ 0, got +Inf"},
		{"step-decay-inf", func() { nn.NewSGD(0, nn.WithSchedule(nn.StepDecay{Initial: math.Inf(1), Factor: 0.5, Every: 1})) },
			"nn: NewSGD: WithSchedule: nn: StepDecay: want finite Initial ≥ 0, Factor ≥ 0 and Every ≥ 1, got +Inf, 0.5, 1"},
		{"exponential-decay-inf", func() {
			nn.NewSGD(0, nn.WithSchedule(nn.ExponentialDecay{Initial: 1, DecaySteps: 1, DecayRate: math.Inf(1)}))
		}, "nn: NewSGD: WithSchedule: nn: ExponentialDecay: want finite Initial ≥ 0, DecayRate ≥ 0 and DecaySteps ≥ 1, got 1, +Inf, 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := panics(tt.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, nn.ErrUsage) || err.Error() != tt.want {
				t.Errorf("panic %v\nwant      %s (wrapping nn.ErrUsage)", v, tt.want)
			}
		})
	}
}

func ExampleStepDecay() {
	s := nn.StepDecay{Initial: 0.1, Factor: 0.1, Every: 30}
	for _, step := range []int{0, 29, 30, 60} {
		fmt.Printf("step %2d: %.4f\n", step, s.Rate(step))
	}
	// Output:
	// step  0: 0.1000
	// step 29: 0.1000
	// step 30: 0.0100
	// step 60: 0.0010
}

func ExampleExponentialDecay() {
	s := nn.ExponentialDecay{Initial: 0.1, DecaySteps: 100, DecayRate: 0.5}
	for _, step := range []int{0, 50, 100} {
		fmt.Printf("step %3d: %.4f\n", step, s.Rate(step))
	}
	// Output:
	// step   0: 0.1000
	// step  50: 0.0707
	// step 100: 0.0500
}

func ExampleCosineDecay() {
	// Warm up linearly from 0 to 0.1 over 2 steps, then decay over 4.
	s := nn.CosineDecay{Initial: 0, WarmupSteps: 2, WarmupTarget: 0.1, DecaySteps: 4}
	for step := range 7 {
		fmt.Printf("%.4f ", s.Rate(step))
	}
	fmt.Println()
	// Output: 0.0000 0.0500 0.1000 0.0854 0.0500 0.0146 0.0000
}
