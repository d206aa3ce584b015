package nn_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// adamWRun trains the variables a [2 2] matrix, "dense/bias" [2] and
// "embedding/embeddings" [3 2] for 4 steps of a fixed quadratic loss and
// returns their values by name.
func adamWRun(t *testing.T, opt func() nn.Optimizer, opts ...strategy.Option) (map[string][]float64, []*nn.Variable) {
	t.Helper()
	s := newStrategy(t, opts...)
	var vars []*nn.Variable
	var o nn.Optimizer
	s.Scope(func() {
		vars = []*nn.Variable{
			strategy.CreateVariable("dense/kernel", []int{2, 2}, []float64{0.5, -1, 2, 0.3}),
			strategy.CreateVariable("dense/bias", []int{2}, []float64{1.5, -0.4}),
			strategy.CreateVariable("embedding/embeddings", []int{3, 2}, []float64{0.1, 0.2, -0.3, 0.8, 1, -2}),
		}
		o = opt()
	})
	step := func(ctx *strategy.ReplicaContext) *nn.Tensor {
		var loss *nn.Tensor
		for _, v := range vars {
			x := ctx.Graph().Var(v)
			l := graph.Sum(graph.Add(graph.Square(x), graph.Scale(x, 0.3)))
			if loss == nil {
				loss = l
			} else {
				loss = graph.Add(loss, l)
			}
		}
		o.ApplyGradients(ctx, ctx.Gradients(loss, vars))
		return loss
	}
	for range 4 {
		if _, err := s.TryRun(step); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]float64{}
	for _, v := range vars {
		out[v.Name()] = v.Value()
	}
	return out, vars
}

// TestAdamWWithoutDecay: the variables AdamW does not decay move exactly as
// under Adam, the others do not.
func TestAdamWWithoutDecay(t *testing.T) { testAdamWWithoutDecay(t, "cpu:0") }

// testAdamWWithoutDecay runs on a strategy of opts, whose first replica
// must be on device.
func testAdamWWithoutDecay(t *testing.T, device string, opts ...strategy.Option) {
	adam, vars := adamWRun(t, func() nn.Optimizer { return nn.NewAdam(0.1) }, opts...)
	if s := strategy.OwnerOf(vars[0]); s.Devices()[0] != device {
		t.Fatalf("strategy on %v, want %s", s.Devices(), device)
	}
	for _, c := range []struct {
		name    string
		opts    []nn.OptimizerOption
		decayed string // the names that decay, sorted
	}{
		{"default", nil, "dense/kernel embedding/embeddings"},
		{"without", []nn.OptimizerOption{nn.WithoutDecay("^embedding/")}, "dense/kernel"},
		{"if", []nn.OptimizerOption{nn.WithDecayIf(func(v *nn.Variable) bool { return strings.HasSuffix(v.Name(), "bias") })}, "dense/bias"},
		{"all-but", []nn.OptimizerOption{nn.WithDecayIf(decayAll), nn.WithoutDecay("kernel", "xyz")}, "dense/bias embedding/embeddings"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opt *nn.AdamW
			got, vars := adamWRun(t, func() nn.Optimizer {
				opt = nn.NewAdamW(0.1, append(c.opts, nn.WithWeightDecay(0.5))...)
				return opt
			}, opts...)
			var decayed, decays []string
			for _, v := range vars {
				name := v.Name()
				if !slices.Equal(got[name], adam[name]) {
					decayed = append(decayed, name)
				}
				if opt.Decays(v) {
					decays = append(decays, name)
				}
			}
			slices.Sort(decayed)
			slices.Sort(decays)
			if strings.Join(decayed, " ") != c.decayed || strings.Join(decays, " ") != c.decayed {
				t.Errorf("moved unlike Adam: %v, Decays true for %v; want %s for both", decayed, decays, c.decayed)
			}
		})
	}
}

func TestAdamWOptionMisuse(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func()
		want string
	}{
		{"pattern", func() { nn.WithoutDecay("bias", "(") }, "nn: WithoutDecay: pattern \"(\": error parsing regexp: missing closing ): `(`"},
		{"nil", func() { nn.NewAdamW(0.1, nn.WithDecayIf(nil)) }, "nn: NewAdamW: WithDecayIf: want a function, got nil"},
		{"adam", func() { nn.NewAdam(0.1, nn.WithoutDecay("bias")) }, "nn: NewAdam: option WithoutDecay does not apply to this optimizer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, _ := panics(c.fn).(error)
			if !errors.Is(err, nn.ErrUsage) || err.Error() != c.want {
				t.Errorf("panic %v, want %q", err, c.want)
			}
		})
	}
}
