// Package strategytest is what the equivalence tests share: they train one
// model on one replica and on several (or on workers, or devices) and
// check that the runs end with the same variables. It trains a model for
// the batches of a dataset (with LossStep's or ClassifierStep's step),
// compares the variables two runs end with, and checks a model against
// PyTorch's logits for the same weights (CheckTorch).
package strategytest

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
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

// LossStep returns a step function that trains model on (x, y): lossObj
// (with ReductionNone) of y and model's output for x, averaged with
// nn.ComputeAverageLoss over globalBatch examples (0: the real examples of
// the global batch), and opt applying its gradients to model's trainable
// variables (nn.TrainableVariables). It returns the replica's loss.
func LossStep(model nn.Model, lossObj nn.Loss, opt nn.Optimizer, globalBatch int) func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
	return func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), globalBatch)
		opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))
		return loss
	}
}

// ClassifierStep is LossStep with sparse categorical cross-entropy of
// logits against class ids: the step the classifier tests train with.
func ClassifierStep(model nn.Model, opt nn.Optimizer, globalBatch int) func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
	return LossStep(model, nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}, opt, globalBatch)
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

// TorchCase is one PyTorch-equivalence check of a model: a file of the
// model's weights written by PyTorch (a safetensors state_dict), the map
// from its names to the model's, an input and PyTorch's logits for it.
type TorchCase struct {
	File   string       // the safetensors file
	Names  nn.TensorMap // PyTorch's names and layouts onto the model's variables
	Input  data.Tensor
	Logits data.Tensor // PyTorch's, in float64
	Ref    string      // who computed Logits, for messages ("nanoGPT's")
}

// CheckTorch runs checkTorch in float32 (logits within 1e-5) and float64
// (within 1e-12), on 1 and 2 replicas, each a subtest.
func CheckTorch(t *testing.T, tc TorchCase, build func() (nn.Model, error)) {
	for _, run := range []struct {
		dt       graph.DType
		replicas int
		tol      float64
	}{{graph.Float32, 1, 1e-5}, {graph.Float32, 2, 1e-5}, {graph.Float64, 1, 1e-12}, {graph.Float64, 2, 1e-12}} {
		t.Run(fmt.Sprintf("%v/%d_replicas", run.dt, run.replicas), func(t *testing.T) {
			checkTorch(t, tc, build, run.dt, run.replicas, run.tol)
		})
	}
}

// checkTorch builds a model with build inside a strategy of dt and
// replicas, loads tc.File into it through tc.Names, and fails t unless its
// logits for tc.Input are tc.Logits within tol relative to max(1, |want|).
// Then it saves the model through the same map and wants every float tensor
// of tc.File back, in name, shape and value, and no other (PyTorch's integer
// counters, such as num_batches_tracked, are not variables).
func checkTorch(t *testing.T, tc TorchCase, build func() (nn.Model, error), dt graph.DType, replicas int, tol float64) {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithDType(dt), strategy.WithReplicas(replicas))
	defer s.Close()
	var model nn.Model
	var err error
	s.Scope(func() {
		model, err = build()
		if err == nil {
			nn.Predict(model, tc.Input) // builds the variables
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nn.LoadSafetensors(tc.File, model, nn.WithTensorMap(tc.Names)); err != nil {
		t.Fatal(err)
	}
	var logits data.Tensor
	s.Scope(func() { logits = nn.Predict(model, tc.Input) })
	if !slices.Equal(logits.Shape, tc.Logits.Shape) {
		t.Fatalf("logits of shape %v, want %v", logits.Shape, tc.Logits.Shape)
	}
	worst := 0.0
	for i, w := range tc.Logits.Data {
		g := logits.Data[i]
		d := math.Abs(g-w) / max(1, math.Abs(w))
		if !(d <= tol) {
			t.Fatalf("logit %d = %v, %s %v (difference %.3g, want ≤ %g)", i, g, tc.Ref, w, d, tol)
		}
		worst = max(worst, d)
	}
	t.Logf("largest difference from %s logits: %.3g", tc.Ref, worst)

	back := filepath.Join(t.TempDir(), "back.safetensors")
	if err := nn.SaveSafetensors(back, model, nn.WithTensorMap(tc.Names)); err != nil {
		t.Fatal(err)
	}
	saved, _, err := nn.ReadSafetensors(back)
	if err != nil {
		t.Fatal(err)
	}
	orig, _, err := nn.ReadSafetensors(tc.File)
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]nn.SafetensorsEntry)
	for _, e := range saved {
		byName[e.Name] = e
	}
	for _, e := range orig {
		if e.DType != "F64" && e.DType != "F32" && e.DType != "F16" && e.DType != "BF16" {
			continue
		}
		g, ok := byName[e.Name]
		if !ok {
			t.Errorf("%s has no tensor %q", back, e.Name)
			continue
		}
		delete(byName, e.Name)
		if !slices.Equal(g.Shape, e.Shape) || !slices.Equal(g.Values(), e.Values()) {
			t.Errorf("tensor %q: saved %v %v, want %v %v", e.Name, g.Shape, g.Values(), e.Shape, e.Values())
		}
	}
	for name := range byName {
		t.Errorf("%s has a tensor %q the original has not", back, name)
	}
}
