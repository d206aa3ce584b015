// Package strategytest is what the equivalence tests share: they train one
// model on one replica and on several (or on workers, or devices) and
// check that the runs end with the same variables. It trains a model for
// the batches of a dataset and compares the variables two runs end with.
package strategytest

import (
	"math"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/strategy"
)

// Train runs step on every global batch of ds distributed by s, fails t
// unless it ran wantSteps steps, and returns Variables(s).
func Train(t testing.TB, s *strategy.Mirrored, ds *data.Dataset, step any, wantSteps int) map[string][]float64 {
	t.Helper()
	steps := 0
	it := s.DistributeDataset(ds).Iter()
	for it.Next() {
		if _, err := s.TryRun(step, it.Batch()); err != nil {
			t.Fatal(err)
		}
		steps++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if steps != wantSteps {
		t.Fatalf("%d replicas ran %d steps, want %d", s.NumReplicasInSync(), steps, wantSteps)
	}
	return Variables(s)
}

// Variables returns every variable of s by name: weights, statistics,
// optimizer slots and counters.
func Variables(s *strategy.Mirrored) map[string][]float64 {
	out := map[string][]float64{}
	for _, v := range s.Variables() {
		out[v.Name()] = v.Value()
	}
	return out
}

// CheckSame fails t unless got, from the run named what ("2 replicas"),
// holds want's variables, each within tol of want's by RelDiff, and logs
// the worst difference.
func CheckSame(t testing.TB, what string, got, want map[string][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d variables, want %d", what, len(got), len(want))
	}
	worst, where := 0.0, ""
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Fatalf("%s: no variable %s", what, name)
		}
		if d := RelDiff(g, w); !(d <= worst) {
			worst, where = d, name
		}
	}
	t.Logf("%s: worst relative difference %.3g (%s)", what, worst, where)
	if !(worst <= tol) {
		t.Errorf("%s: %s differs from the reference run by %.3g, want ≤ %g", what, where, worst, tol)
	}
}

// RelDiff is max |a-b| / max(1, max |b|); a NaN on either side, or
// slices of different lengths, make it +Inf: two runs that both diverged
// are not the same run.
func RelDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	scale, d := 1.0, 0.0
	for i := range b {
		scale = max(scale, math.Abs(b[i]))
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d / scale
}
