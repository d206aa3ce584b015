package resnet_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/models/resnet"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// tiny is the test model: three stages (two of them projecting their
// shortcut), at a size that trains in milliseconds.
var tiny = resnet.Config{Classes: 3, Widths: []int{4, 6, 8}, Blocks: 2, StemStride: 1, SyncBatchNorm: true, Momentum: 0.9}

// train trains tiny for 6 steps on 26 images of 8x8 (global batches of 12,
// 12 and a padded 2, twice) and returns every variable of the strategy by
// name: weights, batch norm statistics and optimizer slots.
func train(t *testing.T, dt graph.DType, adam bool, replicas int) map[string][]float64 {
	t.Helper()
	s := strategy.NewMirrored(strategy.WithReplicas(replicas), strategy.WithDType(dt), strategy.WithSeed(5))
	defer s.Close()
	x := data.RandomNormal(1, 26, 8, 8, 1)
	y := data.RandomInts(2, tiny.Classes, 26)
	var model *resnet.ResNet
	var opt nn.Optimizer
	var err error
	s.Scope(func() {
		model, err = resnet.New("resnet", tiny)
		opt = nn.NewSGD(0.1, nn.WithMomentum(0.9))
		if adam {
			opt = nn.NewAdam(1e-3)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	step := strategytest.ClassifierStep(model, opt, 0)
	return strategytest.Train(t, s, data.FromTensorSlices(x, y).Batch(12).Repeat(2), step, 6)
}

// TestReplicasMatchOneReplica: the ResNet with synchronized batch norm,
// trained on 2 and 3 replicas, ends with one replica's weights, batch norm
// statistics and optimizer state, within 1e-5 relative (float32) or 1e-12
// (float64).
func TestReplicasMatchOneReplica(t *testing.T) {
	for _, c := range []struct {
		name string
		dt   graph.DType
		adam bool
		tol  float64
	}{
		{"f32-sgd", graph.Float32, false, 1e-5},
		{"f32-adam", graph.Float32, true, 1e-5},
		{"f64-sgd", graph.Float64, false, 1e-12},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := train(t, c.dt, c.adam, 1)
			for _, name := range []string{"resnet/stage_2/block_0/proj/kernel", "resnet/stage_1/block_1/bn_2/moving_variance", "resnet/head/kernel"} {
				if _, ok := want[name]; !ok {
					t.Fatalf("no %s among the variables", name)
				}
			}
			for _, n := range []int{2, 3} {
				strategytest.CheckSame(t, fmt.Sprintf("%d replicas", n), train(t, c.dt, c.adam, n), want, c.tol)
			}
		})
	}
}

// TestShapesAndVariables: the small ResNet's logits, its projections only
// where a block changes the shape, and its variable count.
func TestShapesAndVariables(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(1))
	defer s.Close()
	var model *resnet.ResNet
	s.Scope(func() { model, _ = resnet.New("r", resnet.Small(10)) })
	fwd := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return model.Call(ctx, x, false) }
	out := s.Run(fwd, data.RandomNormal(1, 2, 28, 28, 1)).Values()[0]
	if got := fmt.Sprint(out.Shape); got != "[2 10]" {
		t.Errorf("logits %s, want [2 10]", got)
	}
	var proj []string
	params := 0
	for _, v := range model.Variables() {
		if strings.Contains(v.Name(), "/proj/kernel") {
			proj = append(proj, v.Name()+fmt.Sprint(v.Shape()))
		}
		if v.Trainable() {
			params += v.Len()
		}
	}
	if got := fmt.Sprint(proj); got != "[r/stage_1/block_0/proj/kernel[1 1 16 32] r/stage_2/block_0/proj/kernel[1 1 32 64]]" {
		t.Errorf("projections %s", got)
	}
	// stem 144+32; stage 0 4·2304+4·32; stage 1 4608+3·9216+4·64 and its
	// projection 512+64; stage 2 18432+3·36864+4·128 and 2048+128; head 650.
	if params != 174970 {
		t.Errorf("%d trainable parameters, want 174970", params)
	}
}

// TestBadInput: a bad configuration names its field; images of the wrong
// rank fail the Run naming the stem and the shape, and the strategy runs
// the next step.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		cfg  resnet.Config
		want string
	}{
		{resnet.Config{Classes: 10, Blocks: 2, StemStride: 1}, "resnet: want at least one stage in Widths, got none"},
		{resnet.Config{Classes: 10, Widths: []int{8, 0}, Blocks: 2, StemStride: 1}, "resnet: want Widths ≥ 1, got 0 for stage 1"},
		{resnet.Config{Classes: 10, Widths: []int{8}, Blocks: 0, StemStride: 1}, "resnet: want Classes, Blocks and StemStride ≥ 1, got 10, 0 and 1"},
	} {
		if _, err := resnet.New("r", c.cfg); err == nil || err.Error() != c.want {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	var model *resnet.ResNet
	s.Scope(func() { model, _ = resnet.New("r", tiny) })
	fwd := func(ctx *strategy.ReplicaContext, x *nn.Tensor) *nn.Tensor { return model.Call(ctx, x, false) }
	batch := func(shape ...int) any {
		it := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(1, shape...)).Batch(2)).Iter()
		it.Next()
		return it.Batch()
	}
	_, err := s.TryRun(fwd, batch(2, 8, 8))
	if !errors.Is(err, nn.ErrShape) || !strings.Contains(err.Error(), "nn: r/stem: want input shape [batch, height, width, channels], got [1 8 8]") {
		t.Errorf("images without channels: %v", err)
	}
	res, err := s.TryRun(fwd, batch(2, 8, 8, 1))
	if err != nil {
		t.Fatalf("the model after the error: %v", err)
	}
	if got := fmt.Sprint(res.Values()[0].Shape); got != "[1 3]" {
		t.Errorf("logits of a replica %s, want [1 3]", got)
	}
}
