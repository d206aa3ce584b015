package gg_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/gg"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/loopback"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

const envWorker = "GOTRAIN_GG_TEST_WORKER" // "RANK SIZE SOCKET OUT"

// TestMultiWorker trains the gorgonia model on 2 worker processes of 2
// replicas each (a loopback cluster: the test binary started once per
// worker) and on one replica here: after 2 epochs of Adam in float64 the
// weights agree within 1e-12, and both workers hold the same bits.
func TestMultiWorker(t *testing.T) {
	if spec := os.Getenv(envWorker); spec != "" {
		var rank, size int
		var sock, out string
		if _, err := fmt.Sscan(spec, &rank, &size, &sock, &out); err != nil {
			t.Fatal(err)
		}
		var c *loopback.Cluster
		var err error
		if rank == 0 {
			c, err = loopback.Listen(sock, size, 30*time.Second)
		} else {
			c, err = loopback.Dial(sock, rank, size, 30*time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, vars := trainWith(t, 2, strategy.WithCluster(c), strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
		b, _ := json.Marshal(vars)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	_, want := trainWith(t, 2, strategy.WithReplicas(1), strategy.WithDType(graph.Float64))
	dir, err := os.MkdirTemp("", "gg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const size = 2
	got := make([]map[string][]float64, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, fmt.Sprint(r))
			cmd := exec.Command(os.Args[0], "-test.run=^TestMultiWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %s %s", envWorker, r, size, filepath.Join(dir, "s"), out))
			if log, err := cmd.CombinedOutput(); err != nil {
				errs[r] = fmt.Errorf("worker %d: %v\n%s", r, err, log)
				return
			}
			b, err := os.ReadFile(out)
			if err == nil {
				err = json.Unmarshal(b, &got[r])
			}
			errs[r] = err
		}()
	}
	wg.Wait()
	for r := range size {
		if errs[r] != nil {
			t.Fatal(errs[r])
		}
		for name, w := range want {
			if d := maxRelDiff(got[r][name], w); d > 1e-12 {
				t.Errorf("worker %d: %s differs from one replica's by %.3g", r, name, d)
			}
			if !slices.Equal(got[r][name], got[0][name]) {
				t.Errorf("worker %d's %s is not worker 0's bits", r, name)
			}
		}
	}
}

// trainWith trains mlp with Adam for the given epochs on a strategy made
// with opts, and returns the losses and the variables.
func trainWith(t *testing.T, epochs int, opts ...strategy.Option) ([]float64, map[string][]float64) {
	t.Helper()
	s := strategy.NewMirrored(append(opts, strategy.WithSeed(7))...)
	defer s.Close()
	var model *gg.Model
	var opt nn.Optimizer
	s.Scope(func() {
		model = gg.NewModel(mlp)
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
