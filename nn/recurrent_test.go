package nn_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// torchTensor is a tensor of nn/testdata/torch_rnn.json.
type torchTensor struct {
	Shape []int
	Data  []float64
}

// torchCase is one layer of nn/testdata/torch_rnn.json, which
// scripts/torch_rnn_reference.py wrote with torch.nn.LSTM and torch.nn.GRU.
type torchCase struct {
	Name, Kind    string
	Units         int
	Bidirectional bool
	Lengths       []int
	X, Output     torchTensor
	HN            torchTensor `json:"h_n"`
	CN            torchTensor `json:"c_n"`
	H0, C0        torchTensor
	Weights       map[string]torchTensor
}

// transposeRows returns rows [from, to) of w [r, c] transposed: [c, to-from].
func transposeRows(w torchTensor, from, to int) [][]float64 {
	c := w.Shape[1]
	out := make([][]float64, c)
	for j := range out {
		for i := from; i < to; i++ {
			out[j] = append(out[j], w.Data[i*c+j])
		}
	}
	return out
}

// kerasWeights maps torch's weights of one direction (suffix "" or
// "_reverse") to ours. torch keeps weight_ih [gates·u, in] and weight_hh
// [gates·u, u], ours are their transposes; LSTM's gates are in one order
// (i, f, g, o) in both, and its two biases add up to ours; GRU's are r, z, n
// in torch and z, r, n in ours, and its biases stay apart (ours [2, 3u]: the
// input's, then the recurrent product's).
func kerasWeights(c torchCase, suffix string) (kernel, recurrent, bias []float64) {
	u := c.Units
	wih, whh := c.Weights["weight_ih_l0"+suffix], c.Weights["weight_hh_l0"+suffix]
	bih, bhh := c.Weights["bias_ih_l0"+suffix].Data, c.Weights["bias_hh_l0"+suffix].Data
	order := []int{0, 1, 2, 3} // our gate k is torch's gate order[k]
	if c.Kind == "gru" {
		order = []int{1, 0, 2}
	}
	flat := func(w torchTensor) []float64 {
		parts := make([][][]float64, len(order))
		for k, src := range order {
			parts[k] = transposeRows(w, src*u, (src+1)*u)
		}
		var out []float64
		for j := range parts[0] {
			for k := range parts {
				out = append(out, parts[k][j]...)
			}
		}
		return out
	}
	kernel, recurrent = flat(wih), flat(whh)
	pick := func(b []float64) []float64 {
		var out []float64
		for _, src := range order {
			out = append(out, b[src*u:(src+1)*u]...)
		}
		return out
	}
	if c.Kind == "gru" {
		return kernel, recurrent, append(pick(bih), pick(bhh)...)
	}
	bias = pick(bih)
	for i, v := range pick(bhh) {
		bias[i] += v
	}
	return kernel, recurrent, bias
}

// direction returns direction d (0 forward, 1 backward) of a torch state
// [dirs, batch, u].
func direction(s torchTensor, d int) []float64 {
	n := s.Shape[1] * s.Shape[2]
	return s.Data[d*n : (d+1)*n]
}

// TestRecurrentMatchesTorch: LSTM, GRU and Bidirectional with torch's
// weights compute torch.nn.LSTM's and torch.nn.GRU's outputs and final
// states (nn/testdata/torch_rnn.json), with and without initial states,
// and over packed sequences as a mask: torch's outputs past a sequence's
// end are zeros, as Bidirectional's with ReturnSequences are, and a
// single direction's are compared on the real steps.
func TestRecurrentMatchesTorch(t *testing.T) {
	raw, err := os.ReadFile("testdata/torch_rnn.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct{ Cases []torchCase }
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != 8 {
		t.Fatalf("%d cases in testdata/torch_rnn.json, want 8", len(ref.Cases))
	}
	for _, dt := range []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float64, 1e-12}, {graph.Float32, 1e-5}} {
		for _, c := range ref.Cases {
			t.Run(dt.dt.String()+"/"+c.Name, func(t *testing.T) {
				checkTorchCase(t, c, dt.dt, dt.tol)
			})
		}
	}
}

func checkTorchCase(t *testing.T, c torchCase, dt graph.DType, tol float64) {
	s := newStrategy(t, strategy.WithDType(dt))
	b, tt := c.X.Shape[0], c.X.Shape[1]
	g := graph.New(dt)
	x := g.Placeholder("x", c.X.Shape...)
	var mask *nn.Tensor
	var mv []float64
	if c.Lengths != nil {
		mask = g.Placeholder("mask", b, tt)
		for _, n := range c.Lengths {
			for i := range tt {
				mv = append(mv, float64(min(1, max(0, n-i))))
			}
		}
	}
	dirs := 1
	if c.Bidirectional {
		dirs = 2
	}
	var initial []*nn.Tensor
	var initialV [][]float64
	if c.H0.Data != nil {
		for d := range dirs {
			initialV = append(initialV, direction(c.H0, d))
			if c.C0.Data != nil {
				initialV = append(initialV, direction(c.C0, d))
			}
		}
		for i := range initialV {
			initial = append(initial, g.Placeholder(fmt.Sprintf("s%d", i), b, c.Units))
		}
	}
	var layer nn.RecurrentLayer
	var dirLayers []nn.RecurrentLayer
	var y *nn.Tensor
	var states []*nn.Tensor
	s.Scope(func() {
		opts := []nn.LayerOption{nn.ReturnSequences()}
		var l nn.RecurrentLayer = nn.GRU(c.Units, opts...)
		if c.Kind == "lstm" {
			l = nn.LSTM(c.Units, opts...)
		}
		layer, dirLayers = l, []nn.RecurrentLayer{l}
		if c.Bidirectional {
			bi := nn.Bidirectional(l)
			layer, dirLayers = bi, []nn.RecurrentLayer{bi.Forward(), bi.Backward()}
		}
		y, states = layer.CallWithState(nil, x, mask, initial, false)
	})
	for d, l := range dirLayers {
		suffix := []string{"", "_reverse"}[d]
		k, r, bias := kerasWeights(c, suffix)
		vs := l.Variables()
		for i, v := range [][]float64{k, r, bias} {
			if len(v) != vs[i].Len() {
				t.Fatalf("%s: %d values for %v", vs[i].Name(), len(v), vs[i].Shape())
			}
			vs[i].Assign(v)
		}
	}
	prog, err := g.Compile(append([]*nn.Tensor{y}, states...)...)
	if err != nil {
		t.Fatal(err)
	}
	prog.Feed(x, c.X.Data)
	if mask != nil {
		prog.Feed(mask, mv)
	}
	for i, v := range initialV {
		prog.Feed(initial[i], v)
	}
	if err := prog.Run(); err != nil {
		t.Fatal(err)
	}
	compare := func(what string, got, want []float64, real func(i int) bool) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		for i := range want {
			if real != nil && !real(i) {
				continue
			}
			if d := math.Abs(got[i] - want[i]); !(d <= tol) {
				t.Fatalf("%s[%d] = %.9g, torch %.9g (difference %.3g, want ≤ %g)", what, i, got[i], want[i], d, tol)
			}
		}
	}
	var real func(int) bool
	if c.Lengths != nil && !c.Bidirectional {
		w := c.Units
		real = func(i int) bool { return mv[i/w] == 1 }
	}
	compare("output", prog.Value(y), c.Output.Data, real)
	for d := range dirs {
		per := len(states) / dirs
		compare(fmt.Sprintf("h_n[%d]", d), prog.Value(states[d*per]), direction(c.HN, d), nil)
		if c.Kind == "lstm" {
			compare(fmt.Sprintf("c_n[%d]", d), prog.Value(states[d*per+1]), direction(c.CN, d), nil)
		}
	}
}

// recurrentCase is one layer the gradient tests build.
type recurrentCase struct {
	name    string
	layer   func() nn.RecurrentLayer
	states  int // final states CallWithState returns
	initial bool
}

func recurrentCases() []recurrentCase {
	return []recurrentCase{
		{"lstm", func() nn.RecurrentLayer { return nn.LSTM(3) }, 2, false},
		{"lstm-seq-initial", func() nn.RecurrentLayer { return nn.LSTM(3, nn.ReturnSequences()) }, 2, true},
		{"gru", func() nn.RecurrentLayer { return nn.GRU(3) }, 1, false},
		{"gru-seq-initial", func() nn.RecurrentLayer { return nn.GRU(3, nn.ReturnSequences()) }, 1, true},
		{"gru-backwards-seq", func() nn.RecurrentLayer { return nn.GRU(3, nn.ReturnSequences(), nn.GoBackwards()) }, 1, false},
		{"bidirectional-lstm-seq", func() nn.RecurrentLayer { return nn.Bidirectional(nn.LSTM(2, nn.ReturnSequences())) }, 4, false},
		{"bidirectional-gru-sum-initial", func() nn.RecurrentLayer {
			return nn.Bidirectional(nn.GRU(3), nn.Merge(nn.MergeSum))
		}, 2, true},
	}
}

// randomMask returns a [b, t] mask whose first row is all ones, whose
// other rows end in padding, and whose last row also has a gap inside.
func randomMask(b, t int) []float64 {
	m := make([]float64, b*t)
	for r := range b {
		n := t - r
		if r == 0 {
			n = t
		}
		for i := range max(n, 1) {
			m[r*t+i] = 1
		}
	}
	if t > 2 && b > 1 {
		m[(b-1)*t+1] = 0
	}
	return m
}

// flatAll joins tensors of [batch, ...] into one [batch, n] for a loss
// over all of them.
func flatAll(ts ...*nn.Tensor) *nn.Tensor {
	parts := make([]*nn.Tensor, len(ts))
	for i, x := range ts {
		parts[i] = graph.Reshape(x, x.Shape()[0], x.Len()/x.Shape()[0])
	}
	return graph.Concat(1, parts...)
}

// TestRecurrentGradients checks the gradients of LSTM, GRU and
// Bidirectional (every weight, the input and the initial states, through
// the outputs and the final states) against central finite differences in
// float64, over 1, 2 and 7 steps, with and without a mask.
func TestRecurrentGradients(t *testing.T) {
	const b, f = 3, 2
	for _, c := range recurrentCases() {
		for _, steps := range []int{1, 2, 7} {
			for _, masked := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/T=%d/mask=%v", c.name, steps, masked), func(t *testing.T) {
					s := newStrategy(t)
					g := graph.New(graph.Float64)
					x := g.Placeholder("x", b, steps, f)
					var mask *nn.Tensor
					if masked {
						mask = g.Placeholder("mask", b, steps)
					}
					var l nn.RecurrentLayer
					var out *nn.Tensor
					var states []*nn.Tensor
					var initial []*nn.Variable
					s.Scope(func() {
						l = c.layer()
						var init []*nn.Tensor
						if c.initial {
							for i := range c.states {
								v := graph.NewVariable(fmt.Sprintf("s%d", i), []int{b, 3}, graph.Float64, randomValues(uint64(40+i), b*3))
								initial = append(initial, v)
								init = append(init, g.Var(v))
							}
						}
						out, states = l.CallWithState(nil, x, mask, init, true)
					})
					if len(states) != c.states {
						t.Fatalf("%d final states, want %d", len(states), c.states)
					}
					// Weights away from their initial values: biases not zero.
					vars := l.Variables()
					for i, v := range vars {
						v.Assign(randomValues(uint64(20+i), v.Len()))
					}
					p := newGradProgram(t, flatAll(append([]*nn.Tensor{out}, states...)...), x, randomValues(3, b*steps*f), append(vars, initial...)...)
					if masked {
						p.prog.Feed(mask, randomMask(b, steps))
					}
					p.check(t, append(vars, initial...)...)
				})
			}
		}
	}
}

// TestRecurrentPaddingChangesNothing: sequences of 4 steps with a mask give
// the same outputs over those steps, the same final states and the same
// gradients (weights and real inputs; none into the padding) once 3 more
// masked steps of random values are appended, for every layer of the
// gradient tests.
func TestRecurrentPaddingChangesNothing(t *testing.T) {
	const b, f, real, padded = 3, 2, 4, 7
	for _, c := range recurrentCases() {
		t.Run(c.name, func(t *testing.T) {
			s := newStrategy(t)
			var l nn.RecurrentLayer
			s.Scope(func() { l = c.layer() })
			xv := randomValues(5, b*padded*f)
			mv := randomMask(b, padded)
			for r := range b {
				for i := real; i < padded; i++ {
					mv[r*padded+i] = 0
				}
			}
			initial := make([][]float64, 0, c.states)
			if c.initial {
				for i := range c.states {
					initial = append(initial, randomValues(uint64(60+i), b*3))
				}
			}
			weights := randomValues(9, b*(real*6+c.states*3))
			// run builds the layer's graph over the first steps of the
			// padded input and returns its loss's value and gradients.
			run := func(steps int) (float64, [][]float64) {
				g := graph.New(graph.Float64)
				x := g.Placeholder("x", b, steps, f)
				mask := g.Placeholder("mask", b, steps)
				var init []*nn.Tensor
				for i := range initial {
					init = append(init, g.Placeholder(fmt.Sprintf("s%d", i), b, 3))
				}
				var out *nn.Tensor
				var states []*nn.Tensor
				s.Scope(func() { out, states = l.CallWithState(nil, x, mask, init, true) })
				if len(out.Shape()) == 3 {
					// Reading backwards, the sequence comes last step first.
					from := 0
					if strings.Contains(c.name, "backwards") {
						from = steps - real
					}
					out = graph.Slice(out, 1, from, from+real)
				}
				y := flatAll(append([]*nn.Tensor{out}, states...)...)
				w := g.Placeholder("w", y.Shape()...)
				loss := graph.Sum(graph.Mul(y, w))
				xs := []*nn.Tensor{x}
				for _, v := range l.Variables() {
					xs = append(xs, g.Var(v))
				}
				grads := g.Gradients(loss, xs)
				prog, err := g.Compile(append([]*nn.Tensor{loss}, grads...)...)
				if err != nil {
					t.Fatal(err)
				}
				xs0, ms0 := make([]float64, 0, b*steps*f), make([]float64, 0, b*steps)
				for r := range b {
					xs0 = append(xs0, xv[r*padded*f:(r*padded+steps)*f]...)
					ms0 = append(ms0, mv[r*padded:r*padded+steps]...)
				}
				prog.Feed(x, xs0)
				prog.Feed(mask, ms0)
				for i, v := range initial {
					prog.Feed(init[i], v)
				}
				prog.Feed(w, weights[:y.Len()])
				if err := prog.Run(); err != nil {
					t.Fatal(err)
				}
				var gs [][]float64
				for _, gn := range grads {
					gs = append(gs, prog.Value(gn))
				}
				return prog.Scalar(loss), gs
			}
			want, wantGrads := run(real)
			got, gotGrads := run(padded)
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("loss with padding %.15g, without %.15g", got, want)
			}
			// dx: the real steps' as before, the padding's zero.
			for r := range b {
				for i := range padded * f {
					g := gotGrads[0][r*padded*f+i]
					w := 0.0
					if i < real*f {
						w = wantGrads[0][r*real*f+i]
					}
					if math.Abs(g-w) > 1e-12 {
						t.Fatalf("d loss/d x[%d, %d, %d] = %v with padding, want %v", r, i/f, i%f, g, w)
					}
				}
			}
			for k := 1; k < len(wantGrads); k++ {
				name := l.Variables()[k-1].Name()
				for i := range wantGrads[k] {
					if math.Abs(gotGrads[k][i]-wantGrads[k][i]) > 1e-12 {
						t.Fatalf("d loss/d %s[%d] = %v with padding, want %v", name, i, gotGrads[k][i], wantGrads[k][i])
					}
				}
			}
		})
	}
}

// TestRecurrentTracesOncePerLength: a GRU model's step traces once for
// sequences of 5 steps, however many steps run, and once more, with the
// strategy's retrace warning, for sequences of 7.
func TestRecurrentTracesOncePerLength(t *testing.T) {
	var warn strings.Builder
	s := newStrategy(t, strategy.WithReplicas(2), strategy.WithWarnings(&warn))
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = nn.NewSequential(nn.GRU(4), nn.Dense(1))
		opt = nn.NewSGD(0.1)
	})
	step := strategytest.LossStep(model, nn.MeanSquaredError{Reduction: nn.ReductionNone}, opt, 0)
	for i, steps := range []int{5, 5, 5, 7, 7} {
		x, y := data.RandomNormal(uint64(i), 6, steps, 2), data.RandomNormal(uint64(10+i), 6, 1)
		it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(6)).Iter()
		if !it.Next() {
			t.Fatal(it.Err())
		}
		if _, err := s.TryRun(step, it.Batch()); err != nil {
			t.Fatal(err)
		}
		want := 1
		if steps == 7 {
			want = 2
		}
		if got := s.Traces(); got != want {
			t.Fatalf("run %d (%d steps): %d traces, want %d", i, steps, got, want)
		}
	}
	if n := strings.Count(warn.String(), "retracing the step function: its input shapes changed"); n != 1 {
		t.Errorf("%d retrace warnings, want 1:\n%s", n, warn.String())
	}
}

// TestRecurrentMisuse: bad inputs panic with an error wrapping ErrShape or
// ErrUsage that names the layer and, for shapes, both shapes.
func TestRecurrentMisuse(t *testing.T) {
	s := newStrategy(t)
	var gru *nn.GRULayer
	var lstm *nn.LSTMLayer
	var built *nn.GRULayer
	g := graph.New(graph.Float64)
	x := g.Placeholder("x", 2, 5, 3)
	s.Scope(func() {
		gru, lstm = nn.GRU(4, nn.Named("enc")), nn.LSTM(4)
		built = nn.GRU(2)
		built.Build([]int{2, 5, 3})
	})
	call := func(fn func()) func() { return func() { s.Scope(fn) } }
	cases := []struct {
		name string
		fn   func()
		kind error
		want string
	}{
		{"rank", call(func() { gru.Call(nil, g.Placeholder("x2", 2, 5), true) }), nn.ErrShape,
			"nn: enc: want input shape [batch, time, features], got [2 5]"},
		{"mask shape", call(func() { lstm.CallWithState(nil, x, g.Placeholder("m", 2, 4), nil, true) }), nn.ErrShape,
			"nn: lstm: want mask shape [2 5] (the input's [batch, time]), got [2 4] for input [2 5 3]"},
		{"mask rank", call(func() { gru.CallWithState(nil, x, g.Placeholder("m3", 2, 5, 1), nil, true) }), nn.ErrShape,
			"nn: enc: want mask shape [2 5] (the input's [batch, time]), got [2 5 1] for input [2 5 3]"},
		{"width", call(func() { gru.Call(nil, g.Placeholder("x4", 2, 5, 4), true) }), nn.ErrShape,
			"nn: enc: want input shape [batch, time ≥ 1, 3], got [2 5 4]"},
		{"initial count", call(func() { lstm.CallWithState(nil, x, nil, []*nn.Tensor{g.Const(0, 2, 4)}, true) }), nn.ErrUsage,
			"nn: lstm: want 2 initial states, got 1"},
		{"initial shape", call(func() { gru.CallWithState(nil, x, nil, []*nn.Tensor{g.Const(0, 2, 3)}, true) }), nn.ErrShape,
			"nn: enc: want initial state 0 of shape [2 4] for input [2 5 3], got [2 3]"},
		{"recurrent dropout", func() { nn.GRU(4, nn.RecurrentDropout(0.2)) }, nn.ErrUsage,
			"nn: GRU: RecurrentDropout(0.2): recurrent dropout is not implemented; drop the layer's input or output with nn.Dropout instead"},
		{"units", func() { nn.LSTM(0) }, nn.ErrUsage, "nn: LSTM: want at least 1 unit, got 0"},
		{"option", func() { nn.GRU(2, nn.WithoutBias()) }, nn.ErrUsage,
			"nn: GRU: option WithoutBias does not apply; it takes [Named ReturnSequences GoBackwards RecurrentDropout KernelInitializer]"},
		{"bidirectional built", func() { nn.Bidirectional(built) }, nn.ErrUsage,
			"nn: Bidirectional: want a layer neither built nor reading backwards, got gru (built true, backwards false)"},
		{"bidirectional twice", call(func() { nn.Bidirectional(nn.Bidirectional(nn.GRU(2))) }), nn.ErrUsage,
			"nn: Bidirectional: want an LSTM or GRU layer, got *nn.BidirectionalLayer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := panics(c.fn)
			err, ok := v.(error)
			if !ok || !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Errorf("panic %v, want %q wrapping %v", v, c.want, c.kind)
			}
		})
	}
}

// charGRU is the equivalence test's model: embedding, GRU over the
// sequence, a dense layer per step.
func charGRU(vocab int) *nn.Sequential {
	return nn.NewSequential(nn.Embedding(vocab, 6), nn.GRU(8, nn.ReturnSequences()), nn.Dense(vocab))
}

// trainGRU trains charGRU on windows of 6 random ids in global batches of
// 7 (the last of each epoch has 5) for two epochs with n replicas and
// returns every variable of the strategy by name.
func trainGRU(t *testing.T, n int, dt graph.DType) map[string][]float64 {
	t.Helper()
	const vocab = 11
	s := strategy.NewMirrored(strategy.WithReplicas(n), strategy.WithDType(dt), strategy.WithSeed(23))
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	r := rand.New(rand.NewPCG(3, 4))
	text := make([]int, 200)
	for i := range text {
		text[i] = r.IntN(vocab)
	}
	ds, err := data.TextWindows(text, 6, 19, 5)
	if err != nil {
		t.Fatal(err)
	}
	var model *nn.Sequential
	var opt nn.Optimizer
	s.Scope(func() {
		model = charGRU(vocab)
		opt = nn.NewAdam(0.01)
	})
	step := strategytest.ClassifierStep(model, opt, 0)
	return strategytest.Train(t, s, ds.Batch(7).Repeat(2), step, 6)
}

// TestGRUReplicasMatchOneReplica: a GRU character model trains on 2 and 3
// replicas as on one.
func TestGRUReplicasMatchOneReplica(t *testing.T) {
	for _, c := range []struct {
		dt  graph.DType
		tol float64
	}{{graph.Float64, 1e-12}, {graph.Float32, 1e-5}} {
		t.Run(c.dt.String(), func(t *testing.T) {
			want := trainGRU(t, 1, c.dt)
			checkVariables(t, want, "gru/kernel", "gru/recurrent_kernel", "gru/bias")
			for _, n := range []int{2, 3} {
				strategytest.CheckSame(t, fmt.Sprintf("%d replicas", n), trainGRU(t, n, c.dt), want, c.tol)
			}
		})
	}
}
