package nn

import (
	"fmt"
	"math"
)

// Schedule gives the learning rate of each update: Rate(step) is the rate of
// the update made when step updates have already been applied (0 for the
// first), as Keras evaluates a LearningRateSchedule on
// optimizer.iterations. Give one to an optimizer with WithSchedule; the step
// comes from the optimizer's step counter, a variable that checkpoints keep,
// so a restored run continues the schedule where it stopped.
type Schedule interface {
	Rate(step int) float64
}

// StepDecay multiplies the rate by Factor every Every steps:
// Initial·Factor^⌊step/Every⌋ (torch.optim.lr_scheduler.StepLR counted in
// updates, Keras's ExponentialDecay with staircase=True).
type StepDecay struct {
	Initial float64
	Factor  float64
	Every   int
}

// Rate returns Initial·Factor^⌊step/Every⌋.
func (s StepDecay) Rate(step int) float64 {
	return s.Initial * math.Pow(s.Factor, float64(max(step, 0)/s.Every))
}

// Validate reports whether the schedule can be evaluated: Initial ≥ 0,
// Factor ≥ 0, Every ≥ 1.
func (s StepDecay) Validate() error {
	if s.Initial < 0 || s.Factor < 0 || s.Every < 1 || !finite(s.Initial, s.Factor) {
		return fmt.Errorf("nn: StepDecay: want finite Initial ≥ 0, Factor ≥ 0 and Every ≥ 1, got %g, %g, %d", s.Initial, s.Factor, s.Every)
	}
	return nil
}

// ExponentialDecay is Keras's ExponentialDecay:
// Initial·Rate^(step/DecaySteps), with the exponent rounded down when
// Staircase.
type ExponentialDecay struct {
	Initial    float64
	DecaySteps int
	DecayRate  float64
	Staircase  bool
}

// Rate returns Initial·DecayRate^(step/DecaySteps).
func (s ExponentialDecay) Rate(step int) float64 {
	p := float64(max(step, 0)) / float64(s.DecaySteps)
	if s.Staircase {
		p = math.Floor(p)
	}
	return s.Initial * math.Pow(s.DecayRate, p)
}

// Validate reports whether the schedule can be evaluated: Initial ≥ 0,
// DecayRate ≥ 0, DecaySteps ≥ 1.
func (s ExponentialDecay) Validate() error {
	if s.Initial < 0 || s.DecayRate < 0 || s.DecaySteps < 1 || !finite(s.Initial, s.DecayRate) {
		return fmt.Errorf("nn: ExponentialDecay: want finite Initial ≥ 0, DecayRate ≥ 0 and DecaySteps ≥ 1, got %g, %g, %d", s.Initial, s.DecayRate, s.DecaySteps)
	}
	return nil
}

// CosineDecay is Keras's CosineDecay with its linear warm-up: for the first
// WarmupSteps steps the rate rises linearly from Initial to WarmupTarget,
//
//	Initial + (WarmupTarget-Initial)·step/WarmupSteps,
//
// then it follows half a cosine from the peak (WarmupTarget, or Initial when
// WarmupSteps is 0) down to Alpha·peak over DecaySteps steps and stays there:
//
//	d := min(step-WarmupSteps, DecaySteps)
//	peak·((1-Alpha)·½(1+cos(π·d/DecaySteps)) + Alpha)
type CosineDecay struct {
	Initial      float64
	DecaySteps   int
	Alpha        float64 // final rate as a fraction of the peak
	WarmupSteps  int
	WarmupTarget float64 // the peak rate after warm-up; used when WarmupSteps > 0
}

// Rate returns the rate of the update after step updates.
func (s CosineDecay) Rate(step int) float64 {
	step = max(step, 0)
	peak := s.Initial
	if s.WarmupSteps > 0 {
		if step < s.WarmupSteps {
			return s.Initial + (s.WarmupTarget-s.Initial)*float64(step)/float64(s.WarmupSteps)
		}
		peak = s.WarmupTarget
		step -= s.WarmupSteps
	}
	d := float64(min(step, s.DecaySteps)) / float64(s.DecaySteps)
	return peak * ((1-s.Alpha)*0.5*(1+math.Cos(math.Pi*d)) + s.Alpha)
}

// Validate reports whether the schedule can be evaluated: rates ≥ 0,
// DecaySteps ≥ 1, WarmupSteps ≥ 0, Alpha in [0, 1].
func (s CosineDecay) Validate() error {
	if s.Initial < 0 || s.WarmupTarget < 0 || s.DecaySteps < 1 || s.WarmupSteps < 0 || s.Alpha < 0 || s.Alpha > 1 || !finite(s.Initial, s.WarmupTarget, s.Alpha) {
		return fmt.Errorf("nn: CosineDecay: want finite Initial ≥ 0, WarmupTarget ≥ 0, DecaySteps ≥ 1, WarmupSteps ≥ 0 and Alpha in [0, 1], got %g, %g, %d, %d, %g",
			s.Initial, s.WarmupTarget, s.DecaySteps, s.WarmupSteps, s.Alpha)
	}
	return nil
}

// finite reports whether every value is a number other than ±Inf.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
