package gorgoniamodel_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gotrain/gotrain/gorgoniamodel"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loopback/loopbacktest"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

const envWorker = "GOTRAIN_GG_TEST_WORKER" // "RANK SIZE SOCKET OUT"

// TestMultiWorker trains the gorgonia model on 2 worker processes of 2
// replicas each (a loopback cluster: the test binary started once per
// worker) and on one replica here: after 2 epochs of Adam in float64 the
// weights agree within 1e-12, and both workers hold the same bits.
func TestMultiWorker(t *testing.T) {
	if spec, ok := loopbacktest.Worker(envWorker); ok {
		c := spec.Join(t)
		_, vars := trainWith(t, 2, strategy.WithCluster(c), strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
		if err := spec.Write(workerResult{Vars: vars, BuildErr: buildFailsOnWorker1(t, strategy.WithCluster(c))}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	_, want := trainWith(t, 2, strategy.WithReplicas(1), strategy.WithDType(graph.Float64))
	const size = 2
	got, err := loopbacktest.Run[workerResult](size, "^TestMultiWorker$", envWorker)
	if err != nil {
		t.Fatal(err)
	}
	for r := range size {
		for name, w := range want {
			if d := maxRelDiff(got[r].Vars[name], w); d > 1e-12 {
				t.Errorf("worker %d: %s differs from one replica's by %.3g", r, name, d)
			}
			if !slices.Equal(got[r].Vars[name], got[0].Vars[name]) {
				t.Errorf("worker %d's %s is not worker 0's bits", r, name)
			}
		}
		wantErr := map[int]string{0: "worker 1 failed this step", 1: "Inner dimensions do not match up"}[r]
		if !strings.Contains(got[r].BuildErr, wantErr) {
			t.Errorf("worker %d: a build failing on worker 1 alone gave %q, want it to say %q", r, got[r].BuildErr, wantErr)
		}
	}
}

type workerResult struct {
	Vars     map[string][]float64
	BuildErr string // the error of a step whose graph only worker 1 cannot build
}

// buildFailsOnWorker1 runs a step of a model whose graph worker 1 cannot
// build: every worker must return an error (none may wait in a collective
// for worker 1), and a second model trains after it.
func buildFailsOnWorker1(t *testing.T, opts ...strategy.Option) string {
	s := strategy.NewMirrored(append(opts, strategy.WithReplicas(1), strategy.WithDType(graph.Float64))...)
	defer s.Close()
	var model *gorgoniamodel.Model
	s.Scope(func() {
		model = gorgoniamodel.New(func(r *gorgoniamodel.Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{features, classes}, gorgoniamodel.GlorotU(1))
			logits := G.Must(G.Mul(x, w))
			if s.WorkerID() == 1 {
				logits = G.Must(G.Mul(logits, w))
			}
			return r.AverageLoss(G.Must(G.Sum(logits, 1)))
		})
	})
	it := s.DistributeDataset(dataset()).Iter()
	defer it.Close()
	it.Next()
	_, err := model.TryStep(nn.NewSGD(0.1), it.Batch())
	if _, err := s.TryRun(func(x, y *nn.Tensor) *nn.Tensor { return graph.Sum(x) }, it.Batch()); err != nil {
		t.Errorf("a step after the failed build: %v", err)
	}
	return fmt.Sprint(err)
}

// trainWith trains mlp with Adam for the given epochs on a strategy made
// with opts, and returns the losses and the variables.
func trainWith(t *testing.T, epochs int, opts ...strategy.Option) ([]float64, map[string][]float64) {
	t.Helper()
	s := strategy.NewMirrored(append(opts, strategy.WithSeed(7))...)
	defer s.Close()
	var model *gorgoniamodel.Model
	var opt nn.Optimizer
	s.Scope(func() {
		model = gorgoniamodel.New(mlp)
		opt = nn.NewAdam(0.01)
	})
	var losses []float64
	dist := s.DistributeDataset(dataset())
	for range epochs {
		for it := dist.Iter(); it.Next(); {
			losses = append(losses, s.Reduce(strategy.Sum, model.Step(opt, it.Batch()).Field("loss")).Scalar())
		}
	}
	return losses, values(s)
}
