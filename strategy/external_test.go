package strategy_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// linear is an external replica of the model y ≈ w·x on one feature, with
// the squared error averaged over the global batch: the gradient of w on a
// shard is Σ mask·2(w·x−y)·x / count, computed by hand.
type linear struct {
	w    *graph.Variable
	grad []float64
	fail error   // returned by RunStep when set
	seen [][]int // the shapes RunStep got
}

func (l *linear) RunStep(in strategy.ExternalInput) ([]data.Tensor, error) {
	if l.fail != nil {
		return nil, l.fail
	}
	x, y := in.Args[0], in.Args[1]
	l.seen = append(l.seen, x.Shape)
	w := l.w.F64()[0]
	loss, g := 0.0, 0.0
	for i := range x.Data {
		e := w*x.Data[i] - y.Data[i]
		loss += in.Mask.Data[i] * e * e / in.GlobalCount
		g += in.Mask.Data[i] * 2 * e * x.Data[i] / in.GlobalCount
	}
	l.grad[0] = g
	return []data.Tensor{{Data: []float64{loss}}, x.Clone()}, nil
}

func (l *linear) Gradient(v *graph.Variable) strategy.Grad {
	if v != l.w {
		return strategy.Grad{}
	}
	return strategy.Grad{F64: l.grad}
}

// newLinear is a float64 strategy of n replicas, its variable w (0), one
// linear replica per strategy replica, and batches of 7 examples of y = 3x
// in a global batch of 4, so that the last one is partial.
func newLinear(t *testing.T, n int, opts ...strategy.Option) (*strategy.Mirrored, *graph.Variable, []*linear, *strategy.DistributedDataset) {
	t.Helper()
	s := strategy.NewMirrored(append([]strategy.Option{strategy.WithReplicas(n), strategy.WithDType(graph.Float64)}, opts...)...)
	t.Cleanup(func() { s.Close() })
	w := s.CreateVariable("w", []int{1}, nil)
	reps := make([]*linear, n)
	for r := range reps {
		reps[r] = &linear{w: w, grad: make([]float64, 1)}
	}
	x := data.Tensor{Shape: []int{7}, Data: []float64{1, 2, 3, 4, 5, 6, 7}}
	y := x.Scale(3)
	return s, w, reps, s.DistributeDataset(data.FromTensorSlices(x, y).Batch(4))
}

func externalStep(reps []*linear, updates ...strategy.Registration) *strategy.ExternalStep {
	step := &strategy.ExternalStep{Updates: updates, Outputs: []string{"loss", "x"}}
	for _, r := range reps {
		step.Replicas = append(step.Replicas, r)
	}
	return step
}

// sgd is a hand-written update w -= lr·g that records the sums it got.
func sgd(w *graph.Variable, lr float64, got *[]float64) strategy.Registration {
	return strategy.Registration{Name: "sgd", Vars: []*graph.Variable{w}, Update: strategy.UpdateFunc(func(gs []strategy.Grad) {
		*got = append(*got, gs[0].F64[0])
		w.F64()[0] -= lr * gs[0].F64[0]
	})}
}

// checked is an update whose Check returns err.
type checked struct {
	strategy.Update
	err error
}

func (c checked) Check() error { return c.err }

// TestRunExternalMatchesOneReplica trains the linear model on 1, 2 and 3
// replicas: the gradient sums the update gets, the weights and the reduced
// losses agree, and the outputs gather to the batch without padding rows.
func TestRunExternalMatchesOneReplica(t *testing.T) {
	type result struct{ sums, losses, w []float64 }
	train := func(n int) result {
		s, w, reps, dist := newLinear(t, n)
		var res result
		step := externalStep(reps, sgd(w, 0.01, &res.sums))
		for it := dist.Iter(); it.Next(); {
			out, err := s.RunExternal(step, it.Batch())
			if err != nil {
				t.Fatalf("%d replicas: %v", n, err)
			}
			res.losses = append(res.losses, s.Reduce(strategy.Sum, out.Field("loss")).Scalar())
			if x := s.Gather(out.Field("x"), 0); x.Dim(0) != it.Batch().Count() {
				t.Errorf("%d replicas: gathered %d rows, want the batch's %d", n, x.Dim(0), it.Batch().Count())
			}
			res.w = append(res.w, w.F64()[0])
		}
		return res
	}
	want := train(1)
	if len(want.sums) != 2 {
		t.Fatalf("1 replica applied %d updates, want 2", len(want.sums))
	}
	for _, n := range []int{2, 3} {
		got := train(n)
		for _, c := range []struct {
			what      string
			got, want []float64
		}{{"gradient sums", got.sums, want.sums}, {"losses", got.losses, want.losses}, {"weights", got.w, want.w}} {
			if len(c.got) != len(c.want) {
				t.Fatalf("%d replicas: %d %s, want %d", n, len(c.got), c.what, len(c.want))
			}
			for i := range c.want {
				if math.Abs(c.got[i]-c.want[i]) > 1e-12*math.Max(1, math.Abs(c.want[i])) {
					t.Errorf("%d replicas: %s %v, 1 replica %v", n, c.what, c.got, c.want)
					break
				}
			}
		}
	}
}

// TestRunExternalFailures: every failure returns an error and applies
// nothing.
func TestRunExternalFailures(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name  string
		edit  func(w *graph.Variable, reps []*linear, step *strategy.ExternalStep)
		check func(t *testing.T, err error)
	}{
		{"replica fails", func(_ *graph.Variable, reps []*linear, _ *strategy.ExternalStep) { reps[1].fail = boom },
			func(t *testing.T, err error) {
				var re *strategy.ReplicaError
				if !errors.As(err, &re) || re.Replica != 1 || !errors.Is(err, boom) {
					t.Errorf("got %v, want replica 1's error", err)
				}
			}},
		{"gradient of the wrong length", func(_ *graph.Variable, reps []*linear, _ *strategy.ExternalStep) { reps[1].grad = make([]float64, 2) },
			func(t *testing.T, err error) {
				if !errors.Is(err, strategy.ErrUsage) || !strings.Contains(err.Error(), `replica 1's gradient of "w": want 1 float64 values`) {
					t.Errorf("got %v", err)
				}
			}},
		{"too few replicas", func(_ *graph.Variable, _ []*linear, step *strategy.ExternalStep) { step.Replicas = step.Replicas[:1] },
			func(t *testing.T, err error) {
				if !errors.Is(err, strategy.ErrUsage) || !strings.Contains(err.Error(), "want 2 replicas") {
					t.Errorf("got %v", err)
				}
			}},
		{"update with gradient nodes", func(_ *graph.Variable, _ []*linear, step *strategy.ExternalStep) {
			step.Updates[0].Grads = []*graph.Node{nil}
		}, func(t *testing.T, err error) {
			if !errors.Is(err, strategy.ErrUsage) || !strings.Contains(err.Error(), "want Grads nil") {
				t.Errorf("got %v", err)
			}
		}},
		{"check refuses", func(_ *graph.Variable, _ []*linear, step *strategy.ExternalStep) {
			step.Updates[0].Update = checked{step.Updates[0].Update, boom}
		}, func(t *testing.T, err error) {
			if err != boom {
				t.Errorf("got %v, want the Check's error as is", err)
			}
		}},
		{"variable of no strategy", func(_ *graph.Variable, _ []*linear, step *strategy.ExternalStep) {
			step.Updates[0].Vars = []*graph.Variable{graph.NewVariable("stray", []int{1}, graph.Float64, nil)}
		}, func(t *testing.T, err error) {
			if !errors.Is(err, strategy.ErrScope) {
				t.Errorf("got %v, want ErrScope", err)
			}
		}},
		{"wrong number of outputs", func(_ *graph.Variable, _ []*linear, step *strategy.ExternalStep) { step.Outputs = []string{"loss"} },
			func(t *testing.T, err error) {
				if !errors.Is(err, strategy.ErrUsage) || !strings.Contains(err.Error(), "returned 2 outputs, want 1") {
					t.Errorf("got %v", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, w, reps, dist := newLinear(t, 2)
			w.F64()[0] = 0.5
			var sums []float64
			step := externalStep(reps, sgd(w, 0.01, &sums))
			c.edit(w, reps, step)
			it := dist.Iter()
			defer it.Close()
			it.Next()
			_, err := s.RunExternal(step, it.Batch())
			c.check(t, err)
			if len(sums) != 0 || w.F64()[0] != 0.5 {
				t.Errorf("a failed step applied its update: sums %v, w %v", sums, w.F64()[0])
			}
		})
	}
}

// TestRunExternalChecksNumerics: a NaN gradient on one replica stops the
// step in the "check" phase, naming the replica and the variable.
func TestRunExternalChecksNumerics(t *testing.T) {
	s, w, reps, dist := newLinear(t, 2, strategy.WithCheckNumerics(true))
	var sums []float64
	step := externalStep(reps, sgd(w, 0.01, &sums))
	it := dist.Iter()
	defer it.Close()
	it.Next()
	bad := &nanGradient{linear: reps[1]}
	step.Replicas[1] = bad
	_, err := s.RunExternal(step, it.Batch())
	var re *strategy.ReplicaError
	if !errors.As(err, &re) || re.Replica != 1 || re.Phase != "check" || !errors.Is(err, strategy.ErrNonFinite) || !strings.Contains(err.Error(), `gradient of "w"`) {
		t.Fatalf("got %v, want replica 1's non-finite gradient of w", err)
	}
	if len(sums) != 0 || w.F64()[0] != 0 {
		t.Errorf("the step applied its update")
	}
}

type nanGradient struct{ *linear }

func (n *nanGradient) RunStep(in strategy.ExternalInput) ([]data.Tensor, error) {
	out, err := n.linear.RunStep(in)
	n.grad[0] = math.NaN()
	return out, err
}

// TestRunExternalInterrupt: RunExternal is a safe point.
func TestRunExternalInterrupt(t *testing.T) {
	s, w, reps, dist := newLinear(t, 2)
	var sums []float64
	it := dist.Iter()
	defer it.Close()
	it.Next()
	safepoint.Raise()
	_, err := s.RunExternal(externalStep(reps, sgd(w, 0.01, &sums)), it.Batch())
	safepoint.Clear()
	if err != safepoint.ErrInterrupted {
		t.Fatalf("got %v, want safepoint.ErrInterrupted", err)
	}
	if len(reps[0].seen) != 0 {
		t.Error("a replica ran after the interrupt")
	}
}

// TestExternalShapes: the shapes of each replica's shard, padding included.
func TestExternalShapes(t *testing.T) {
	s, _, _, dist := newLinear(t, 2)
	it := dist.Iter()
	defer it.Close()
	var got [][][][]int
	for it.Next() {
		sh, err := s.ExternalShapes(it.Batch())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sh)
	}
	// 7 examples in batches of 4 over 2 replicas: 2 rows each, then 3
	// examples padded to 2 rows each.
	for i, sh := range got {
		for r := range sh {
			if !slices.Equal(sh[r][0], []int{2}) || !slices.Equal(sh[r][1], []int{2}) {
				t.Errorf("batch %d, replica %d: shapes %v, want [2] [2]", i, r, sh[r])
			}
		}
	}
	if _, err := s.ExternalShapes(data.Zeros(4, 1)); !errors.Is(err, strategy.ErrUsage) {
		t.Errorf("an undistributed tensor: got %v, want ErrUsage", err)
	}
}

// TestHostUpdateMatchesTracedUpdate: nn.HostUpdate applies the optimizer's
// arithmetic (here Adam with clipping) to summed gradients as a traced step
// does, and counts its iterations.
func TestHostUpdateMatchesTracedUpdate(t *testing.T) {
	s, w, reps, dist := newLinear(t, 2)
	opt := nn.NewAdam(0.1, nn.WithClipGlobalNorm(1))
	step := externalStep(reps, nn.HostUpdate(s, opt, []*graph.Variable{w}))
	for it := dist.Iter(); it.Next(); {
		if _, err := s.RunExternal(step, it.Batch()); err != nil {
			t.Fatal(err)
		}
	}
	if opt.Iterations() != 2 {
		t.Errorf("Iterations %d, want 2", opt.Iterations())
	}
	// Adam's first steps move by about lr whatever the gradient's scale.
	if got := w.F64()[0]; math.Abs(got-0.2) > 1e-3 {
		t.Errorf("w = %v after 2 Adam steps of 0.1 up the slope, want ≈ 0.2", got)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(error).Error(), "HostUpdate: want an optimizer of package nn") {
			t.Errorf("HostUpdate of a foreign optimizer: got %v", v)
		}
	}()
	nn.HostUpdate(s, foreign{}, []*graph.Variable{w})
}

type foreign struct{}

func (foreign) ApplyGradients(*strategy.ReplicaContext, []*nn.Tensor) {}
func (foreign) Iterations() int                                       { return 0 }
