package gorgoniamodel_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/gorgoniamodel"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

const (
	examples = 103 // divides neither by the batch nor by 2, 3 or 4 replicas
	batch    = 16
	features = 20
	classes  = 5
)

// dataset is 103 random examples of 20 features and a class id each.
func dataset() *data.Dataset {
	x := data.RandomNormal(1, examples, features)
	y := data.RandomInts(2, classes, examples)
	return data.FromTensorSlices(x, y).Batch(batch)
}

// mlp is a 20-24(tanh)-5 classifier with a softmax cross-entropy loss.
func mlp(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
	w0 := r.Param("w0", []int{features, 24}, gorgoniamodel.GlorotU(1))
	b0 := r.Param("b0", []int{24}, gorgoniamodel.Uniform(-0.1, 0.1))
	h := G.Must(G.Tanh(G.Must(G.BroadcastAdd(G.Must(G.Mul(x, w0)), b0, nil, []byte{0}))))
	w1 := r.Param("w1", []int{24, classes}, gorgoniamodel.GlorotN(1))
	logits := G.Must(G.Mul(h, w1))
	r.Output("logits", logits)
	perExample := G.Must(G.Neg(G.Must(G.Sum(G.Must(G.HadamardProd(r.OneHot(y, classes), G.Must(G.LogSoftMax(logits)))), 1))))
	return r.AverageLoss(perExample)
}

// run trains mlp for the given epochs on replicas replicas and returns the
// loss of every step and the final parameters and optimizer variables.
func run(t *testing.T, replicas int, dt graph.DType, newOpt func() nn.Optimizer, epochs int) (losses []float64, vars map[string][]float64) {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(replicas), strategy.WithDType(dt), strategy.WithSeed(7))
	defer s.Close()
	var model *gorgoniamodel.Model
	var opt nn.Optimizer
	s.Scope(func() {
		model = gorgoniamodel.New(mlp)
		opt = newOpt()
	})
	dist := s.DistributeDataset(dataset())
	for range epochs {
		for it := dist.Iter(); it.Next(); {
			out, err := model.TryStep(opt, it.Batch())
			if err != nil {
				t.Fatalf("%d replicas: step %d: %v", replicas, len(losses)+1, err)
			}
			losses = append(losses, s.Reduce(strategy.Sum, out.Field("loss")).Scalar())
		}
	}
	vars = make(map[string][]float64)
	for _, v := range s.Variables() {
		vars[v.Name()] = v.Value()
	}
	return losses, vars
}

// maxRelDiff returns max |a-b| / max |b|: the error relative to the
// tensor's scale, so that near-zero elements do not dominate (as
// strategy's own equivalence test measures).
func maxRelDiff(a, b []float64) float64 {
	scale, d := 0.0, 0.0
	for i := range b {
		scale = max(scale, math.Abs(b[i]))
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return math.Inf(1)
		}
		d = max(d, math.Abs(a[i]-b[i]))
	}
	if scale == 0 {
		return d
	}
	return d / scale
}

// TestReplicasMatchOneReplica trains the same gorgonia model on 1 replica
// and on 2, 3 and 4, over 2 epochs of 7 steps whose last batch is partial
// (padded and masked), and compares every loss and every variable.
func TestReplicasMatchOneReplica(t *testing.T) {
	opts := []struct {
		name string
		opt  func() nn.Optimizer
	}{
		{"adam", func() nn.Optimizer { return nn.NewAdam(0.01) }},
		{"sgd-momentum", func() nn.Optimizer { return nn.NewSGD(0.1, nn.WithMomentum(0.9)) }},
		{"adam-clipped", func() nn.Optimizer { return nn.NewAdam(0.01, nn.WithClipGlobalNorm(0.5)) }},
	}
	for _, dt := range []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float64, 1e-12}, {graph.Float32, 1e-5}} {
		for _, o := range opts {
			t.Run(fmt.Sprintf("%v/%s", dt.dt, o.name), func(t *testing.T) {
				wantLoss, wantVars := run(t, 1, dt.dt, o.opt, 2)
				if len(wantLoss) != 14 {
					t.Fatalf("1 replica ran %d steps, want 14", len(wantLoss))
				}
				if wantLoss[len(wantLoss)-1] >= wantLoss[0] {
					t.Errorf("the loss did not fall: %v", wantLoss)
				}
				for _, n := range []int{2, 3, 4} {
					loss, vars := run(t, n, dt.dt, o.opt, 2)
					if d := maxRelDiff(wantLoss, loss); d > dt.tol {
						t.Errorf("%d replicas: losses differ from 1 replica's by %.3g (tolerance %g)", n, d, dt.tol)
					}
					if len(vars) != len(wantVars) {
						t.Fatalf("%d replicas: %d variables, 1 replica %d", n, len(vars), len(wantVars))
					}
					for name, want := range wantVars {
						if d := maxRelDiff(want, vars[name]); d > dt.tol {
							t.Errorf("%d replicas: variable %q differs from 1 replica's by %.3g (tolerance %g)", n, name, d, dt.tol)
						}
					}
				}
			})
		}
	}
}

// values returns a copy of every variable of s, by name.
func values(s *strategy.Mirrored) map[string][]float64 {
	out := make(map[string][]float64)
	for _, v := range s.Variables() {
		out[v.Name()] = v.Value()
	}
	return out
}

// newSGD is a strategy of 2 float64 replicas with mlp and plain SGD, and the
// first batch of the dataset distributed over it.
func newSGD(t *testing.T, lr float64) (*strategy.Mirrored, *gorgoniamodel.Model, *nn.SGD, *strategy.PerReplicaBatch) {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	t.Cleanup(func() { s.Close() })
	var model *gorgoniamodel.Model
	var opt *nn.SGD
	s.Scope(func() {
		model = gorgoniamodel.New(mlp)
		opt = nn.NewSGD(lr)
	})
	it := s.DistributeDataset(dataset()).Iter()
	t.Cleanup(it.Close)
	if !it.Next() {
		t.Fatal(it.Err())
	}
	return s, model, opt, it.Batch()
}

// TestGradientsClearedBetweenSteps checks the pitfall the spike found:
// gorgonia adds each run's gradients to its dual values, so a bridge that
// does not clear them feeds one step's gradient into the next. The second
// of two SGD steps on one batch must equal a first step taken from the
// weights the first step left.
func TestGradientsClearedBetweenSteps(t *testing.T) {
	s, model, opt, b := newSGD(t, 0.5)
	model.Step(opt, b)
	after1 := values(s)
	model.Step(opt, b)
	after2 := values(s)

	s2, fresh, opt2, b2 := newSGD(t, 0.5)
	if err := fresh.Build([]int{features}, []int{}); err != nil {
		t.Fatal(err)
	}
	for _, v := range fresh.Variables() {
		v.Assign(after1[v.Name()])
	}
	fresh.Step(opt2, b2)
	for name, want := range after2 {
		if name == "sgd/iterations" {
			continue
		}
		if got := values(s2)[name]; !slices.Equal(got, want) {
			t.Errorf("%s: the second step differs from a first step from the same weights by %.3g", name, maxRelDiff(got, want))
		}
	}
}

// TestRunDoesNotWriteParameters checks what sharing one copy of the
// parameters among concurrently running replicas relies on: gorgonia's
// machines only read them. A step with a learning rate of 0 and an
// evaluation leave every parameter's bits as they were.
func TestRunDoesNotWriteParameters(t *testing.T) {
	s, model, opt, b := newSGD(t, 0)
	model.Step(opt, b) // builds the parameters
	before := values(s)
	for range 3 {
		model.Step(opt, b)
		model.Evaluate(b)
	}
	for name, want := range before {
		if name == "sgd/iterations" {
			continue
		}
		if got := values(s)[name]; !slices.Equal(got, want) {
			t.Errorf("%s changed", name)
		}
	}
}

// TestBuildErrorNamesReplica builds a training graph whose shapes do not
// match on replica 1 only: the step fails with a ReplicaError naming
// replica 1 and the shapes gorgonia refused, and no variable changes.
func TestBuildErrorNamesReplica(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	var model *gorgoniamodel.Model
	s.Scope(func() {
		model = gorgoniamodel.New(func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{features, classes}, gorgoniamodel.GlorotU(1))
			logits := G.Must(G.Mul(x, w))
			if r.ID() == 1 && r.Training() {
				logits = G.Must(G.Mul(logits, w)) // [8 5] × [20 5]
			}
			return r.AverageLoss(G.Must(G.Sum(logits, 1)))
		})
	})
	it := s.DistributeDataset(dataset()).Iter()
	defer it.Close()
	it.Next()
	model.Evaluate(it.Batch()) // creates w
	before := values(s)
	_, err := model.TryStep(nn.NewSGD(0.1), it.Batch())
	var re *strategy.ReplicaError
	if !errors.As(err, &re) || re.Replica != 1 {
		t.Fatalf("got %v, want a ReplicaError for replica 1", err)
	}
	for _, want := range []string{"replica 1", "at gorgoniamodel_test.go:", "A × B", "Inner dimensions"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	for name, want := range before {
		if !slices.Equal(want, values(s)[name]) {
			t.Errorf("a failed step changed %s", name)
		}
	}
	t.Log(err)
}

// TestCheckpointRestoresUnderOtherReplicaCount trains on 2 replicas, saves
// a checkpoint after one epoch and trains one more; a fresh 1-replica
// strategy restores the checkpoint (parameters and Adam's slots) and trains
// the same epoch: both end at the same weights.
func TestCheckpointRestoresUnderOtherReplicaCount(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gorgonia.ckpt")
	train := func(replicas int, restore bool) map[string][]float64 {
		s := strategy.NewMirrored(strategy.WithReplicas(replicas), strategy.WithSeed(3))
		defer s.Close()
		var model *gorgoniamodel.Model
		var opt nn.Optimizer
		s.Scope(func() {
			model = gorgoniamodel.New(mlp)
			opt = nn.NewAdam(0.01)
			if restore {
				if err := model.Build([]int{features}, []int{}); err != nil {
					t.Fatal(err)
				}
				nn.BuildOptimizer(opt, model.TrainableVariables())
			}
		})
		if restore {
			if err := nn.RestoreCheckpoint(path, s); err != nil {
				t.Fatal(err)
			}
		}
		dist := s.DistributeDataset(dataset())
		epoch := func() {
			for it := dist.Iter(); it.Next(); {
				model.Step(opt, it.Batch())
			}
		}
		if !restore {
			epoch()
			if err := nn.SaveCheckpoint(path, s); err != nil {
				t.Fatal(err)
			}
		}
		epoch()
		return values(s)
	}
	want := train(2, false)
	got := train(1, true)
	if len(got) != len(want) {
		t.Fatalf("restored %d variables, want %d", len(got), len(want))
	}
	for name, w := range want {
		if d := maxRelDiff(got[name], w); d > 1e-5 {
			t.Errorf("%s: the restored run differs by %.3g", name, d)
		}
	}
}

// TestMisuse: each mistake gets an error that names it, and the model keeps
// working after it where it can.
func TestMisuse(t *testing.T) {
	step := func(t *testing.T, build gorgoniamodel.BuildFunc, ds *data.Dataset) error {
		s := strategy.NewMirrored(strategy.WithReplicas(2))
		defer s.Close()
		var model *gorgoniamodel.Model
		s.Scope(func() { model = gorgoniamodel.New(build) })
		it := s.DistributeDataset(ds).Iter()
		defer it.Close()
		it.Next()
		_, err := model.TryStep(nn.NewSGD(0.1), it.Batch())
		return err
	}
	meanLoss := func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
		w := r.Param("w", []int{features, classes}, gorgoniamodel.GlorotU(1))
		return G.Must(G.Mean(G.Must(G.Mul(x, w))))
	}
	badLabels := func() *data.Dataset {
		x := data.RandomNormal(1, examples, features)
		y := data.RandomInts(2, classes, examples)
		y.Data[10] = 7
		return data.FromTensorSlices(x, y).Batch(batch)
	}
	noParams := func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
		return r.AverageLoss(G.Must(G.Sum(x, 1)))
	}
	cases := []struct {
		name  string
		build gorgoniamodel.BuildFunc
		ds    *data.Dataset
		want  []string
	}{
		{"a per-replica mean", meanLoss, dataset(), []string{"replica 0", "r.AverageLoss", "2 times too large"}},
		{"a label out of range", mlp, badLabels(), []string{"replica 1", "example 10 of the global batch (row 2 of the replica's shard)", "want a label in [0,5), got 7"}},
		{"no parameters", noParams, dataset(), []string{"no parameters"}},
		{"a per-class loss", func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{features, classes}, nil)
			return r.AverageLoss(G.Must(G.Mul(x, w)))
		}, dataset(), []string{"want one loss per example, a vector [8], got shape (8, 5)"}},
		{"one-hot of a non-input", func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{features, classes}, nil)
			r.OneHot(G.Must(G.Mul(x, w)), classes)
			return nil
		}, dataset(), []string{"OneHot: want one of the build function's inputs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := step(t, c.build, c.ds)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
		})
	}
	t.Run("outside Scope", func(t *testing.T) {
		defer func() {
			err, _ := recover().(error)
			if !errors.Is(err, gorgoniamodel.ErrUsage) || !strings.Contains(err.Error(), "inside s.Scope") {
				t.Errorf("got %v", err)
			}
		}()
		gorgoniamodel.New(mlp)
	})
}

// TestEvaluate: an evaluation graph (Training false) returns the loss and
// the outputs the build function asked for, Gather drops the padding rows,
// and nothing is updated.
func TestEvaluate(t *testing.T) {
	s, model, opt, _ := newSGD(t, 0.1)
	dist := s.DistributeDataset(dataset())
	rows := 0
	for it := dist.Iter(); it.Next(); {
		out := model.Evaluate(it.Batch())
		if names := out.Names(); !slices.Equal(names, []string{"loss", "logits"}) {
			t.Fatalf("parts %v, want [loss logits]", names)
		}
		logits := s.Gather(out.Field("logits"), 0)
		if logits.Dim(0) != it.Batch().Count() || logits.Dim(1) != classes {
			t.Errorf("logits %v for a batch of %d", logits.Shape, it.Batch().Count())
		}
		rows += logits.Dim(0)
	}
	if rows != examples {
		t.Errorf("evaluated %d rows, want %d", rows, examples)
	}
	if opt.Iterations() != 0 {
		t.Errorf("Evaluate applied %d updates", opt.Iterations())
	}
}

// TestInitializersAreSeeded: the same seed gives the same initial weights
// on any replica count and in every run (gorgonia's own initializers seed
// from the clock); another seed gives others.
func TestInitializersAreSeeded(t *testing.T) {
	initial := func(replicas int, seed uint64) map[string][]float64 {
		s := strategy.NewMirrored(strategy.WithReplicas(replicas), strategy.WithSeed(seed))
		defer s.Close()
		var model *gorgoniamodel.Model
		s.Scope(func() { model = gorgoniamodel.New(mlp) })
		if err := model.Build([]int{features}, []int{}); err != nil {
			t.Fatal(err)
		}
		return values(s)
	}
	a, b, c := initial(1, 5), initial(3, 5), initial(1, 6)
	for name, w := range a {
		if !slices.Equal(w, b[name]) {
			t.Errorf("%s: seed 5 gives other weights on 3 replicas than on 1", name)
		}
		if slices.Equal(w, c[name]) {
			t.Errorf("%s: seeds 5 and 6 give the same weights", name)
		}
	}
}
