package nn_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// ckptRun is a training setup that can stop, checkpoint and resume: a
// model, an Adam optimizer on a warm-up schedule, and a fixed sequence of
// global batches (40 examples in batches of 12: the 4th batch of each epoch
// is partial).
type ckptRun struct {
	s     *strategy.Mirrored
	model *nn.Sequential
	opt   nn.Optimizer
	step  func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
	dist  *strategy.DistributedDataset
}

func newCkptRun(t *testing.T, replicas int, accumulate bool) *ckptRun {
	t.Helper()
	r := &ckptRun{s: newStrategy(t, strategy.WithReplicas(replicas))}
	r.s.Scope(func() {
		r.model = nn.NewSequential(nn.Dense(6, nn.ReLU), nn.Dense(3))
		r.opt = nn.NewAdam(0, nn.WithSchedule(nn.CosineDecay{WarmupSteps: 3, WarmupTarget: 0.05, DecaySteps: 20}), nn.WithClipGlobalNorm(2))
		if accumulate {
			r.opt = nn.Accumulate(r.opt, 2)
		}
	})
	lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
	r.step = func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
		loss := nn.ComputeAverageLoss(lossObj.Call(y, r.model.Call(ctx, x, true)), 0)
		loss = graph.Add(loss, nn.ScaleRegularizationLoss(nn.L2(1e-3, r.model.TrainableVariables())))
		r.opt.ApplyGradients(ctx, ctx.Gradients(loss, r.model.TrainableVariables()))
		return loss
	}
	x := data.RandomNormal(21, 40, 4)
	y := data.RandomInts(22, 3, 40)
	r.dist = r.s.DistributeDataset(data.FromTensorSlices(x, y).Batch(12))
	return r
}

// train runs global steps [from, to) of the fixed batch sequence.
func (r *ckptRun) train(t *testing.T, from, to int) {
	t.Helper()
	step := 0
	for step < to {
		it := r.dist.Iter()
		for it.Next() && step < to {
			if step >= from {
				if _, err := r.s.TryRun(r.step, it.Batch()); err != nil {
					t.Fatal(err)
				}
			}
			step++
		}
		it.Close()
	}
}

// build makes the model's and the optimizer's variables so a checkpoint can
// be restored into a fresh strategy.
func (r *ckptRun) build() {
	r.s.Scope(func() {
		r.model.Build([]int{1, 4})
		nn.BuildOptimizer(r.opt, r.model.TrainableVariables())
	})
}

func values(vs []*nn.Variable) map[string][]float64 {
	out := make(map[string][]float64)
	for _, v := range vs {
		out[v.Name()] = v.Value()
	}
	return out
}

// TestCheckpointResumeUnderOtherReplicaCounts saves after k steps on 2
// replicas, restores on 1 and on 3, trains on, and compares every variable
// (weights, slots, counters) with an uninterrupted run.
func TestCheckpointResumeUnderOtherReplicaCounts(t *testing.T) {
	const k, total = 5, 11
	for _, accumulate := range []bool{false, true} {
		ref := newCkptRun(t, 2, accumulate)
		ref.train(t, 0, total)
		want := values(ref.s.Variables())

		first := newCkptRun(t, 2, accumulate)
		first.train(t, 0, k)
		path := filepath.Join(t.TempDir(), "model.ckpt")
		if err := nn.SaveCheckpoint(path, first.s); err != nil {
			t.Fatal(err)
		}
		for _, replicas := range []int{1, 3} {
			t.Run(fmt.Sprintf("accumulate=%v/replicas=%d", accumulate, replicas), func(t *testing.T) {
				r := newCkptRun(t, replicas, accumulate)
				r.build()
				if err := nn.RestoreCheckpoint(path, r.s); err != nil {
					t.Fatal(err)
				}
				if got := r.opt.Iterations(); got != first.opt.Iterations() {
					t.Fatalf("restored Iterations() = %d, want %d", got, first.opt.Iterations())
				}
				r.train(t, k, total)
				got := values(r.s.Variables())
				if len(got) != len(want) {
					t.Fatalf("%d variables, want %d", len(got), len(want))
				}
				for name, w := range want {
					g, ok := got[name]
					if !ok {
						t.Fatalf("no variable %q after resuming", name)
					}
					for i := range w {
						if math.Abs(g[i]-w[i]) > 1e-10*math.Max(1, math.Abs(w[i])) {
							t.Fatalf("%s[%d] = %.15g, uninterrupted %.15g", name, i, g[i], w[i])
						}
					}
				}
			})
		}
	}
}

func smallCheckpoint(t *testing.T, dir string) (path string, vars nn.VariableList) {
	t.Helper()
	a := graph.NewVariable("a", []int{2, 2}, graph.Float32, []float64{1, 2, 3, 4})
	b := graph.NewVariable("opt/b", []int{3}, graph.Float64, []float64{0.5, -1, 1e300})
	c := graph.NewVariable("scalar", nil, graph.Float64, []float64{7})
	vars = nn.VariableList{a, b, c}
	path = filepath.Join(dir, "small.ckpt")
	if err := nn.SaveCheckpoint(path, vars); err != nil {
		t.Fatal(err)
	}
	return path, vars
}

func TestCheckpointTruncatedAtEveryByte(t *testing.T) {
	dir := t.TempDir()
	path, vars := smallCheckpoint(t, dir)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.ckpt")
	for n := range len(full) {
		if err := os.WriteFile(cut, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		err := nn.RestoreCheckpoint(cut, vars)
		if err == nil {
			t.Fatalf("prefix of %d of %d bytes restored without error", n, len(full))
		}
		if !errors.Is(err, nn.ErrCheckpoint) || !strings.Contains(err.Error(), "truncated: file ends at byte "+fmt.Sprint(n)) {
			t.Fatalf("prefix of %d bytes: %v; want a truncation error", n, err)
		}
	}
	if err := nn.RestoreCheckpoint(path, vars); err != nil {
		t.Fatalf("whole file: %v", err)
	}
}

func TestCheckpointCorruption(t *testing.T) {
	dir := t.TempDir()
	path, vars := smallCheckpoint(t, dir)
	full, _ := os.ReadFile(path)
	edits := 0
	edit := func(f func(b []byte) []byte) string {
		b := f(append([]byte(nil), full...))
		edits++
		p := filepath.Join(dir, fmt.Sprintf("edited%d.ckpt", edits))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		dst  nn.VariableSource
		want string
	}{
		{"magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), vars, `not a gotrain checkpoint: want magic "GOTRCKPT"`},
		{"version", edit(func(b []byte) []byte { b[8] = 9; return b }), vars, "format version 9, want 1"},
		{"data-bit", edit(func(b []byte) []byte { b[len(b)-9] ^= 1; return b }), vars, "corrupt: checksum mismatch"},
		{"trailing", edit(func(b []byte) []byte { return append(b, 0) }), vars, "corrupt: 1 unexpected bytes after the last variable"},
		{"dtype", edit(func(b []byte) []byte { b[16+4+1] = 7; return b }), vars, `corrupt: variable 0 ("a") has dtype code 7`},
		{"missing-variable", path, append(vars[:len(vars):len(vars)], graph.NewVariable("extra", []int{1}, graph.Float32, nil)),
			`variable "extra" [1] is not in the file (it holds 3 variables: "a", "opt/b", "scalar")`},
		{"unused-entry", path, vars[:2], `the file's variable "scalar" [] matches no variable being restored`},
		{"shape", path, nn.VariableList{vars[0], graph.NewVariable("opt/b", []int{1, 3}, graph.Float64, nil), vars[2]},
			`variable "opt/b": want shape [1 3], file has [3]`},
		{"no-file", filepath.Join(dir, "none.ckpt"), vars, "read: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := values(tt.dst.Variables())
			err := nn.RestoreCheckpoint(tt.path, tt.dst)
			if err == nil || !errors.Is(err, nn.ErrCheckpoint) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v\nwant one containing %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "nn: checkpoint "+tt.path+": ") {
				t.Errorf("error %q does not name the file", err)
			}
			for name, v := range values(tt.dst.Variables()) {
				if fmt.Sprint(v) != fmt.Sprint(before[name]) {
					t.Errorf("%s changed by a failed restore", name)
				}
			}
		})
	}
	if _, err := nn.ReadCheckpointIndex(filepath.Join(dir, "none.ckpt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want an error wrapping os.ErrNotExist", err)
	}
}

func TestCheckpointRestoreConvertsAndPartial(t *testing.T) {
	dir := t.TempDir()
	path, _ := smallCheckpoint(t, dir)
	a64 := graph.NewVariable("a", []int{2, 2}, graph.Float64, nil)
	b32 := graph.NewVariable("opt/b", []int{3}, graph.Float32, nil)
	other := graph.NewVariable("other", []int{1}, graph.Float32, []float64{9})
	if err := nn.RestoreCheckpoint(path, nn.VariableList{a64, b32, other}, nn.PartialRestore()); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(a64.Value(), b32.Value()[:2], other.Value()); got != "[1 2 3 4] [0.5 -1] [9]" {
		t.Errorf("restored %s", got)
	}
	if !math.IsInf(b32.Value()[2], 1) {
		t.Errorf("1e300 into float32 gave %v, want +Inf", b32.Value()[2])
	}
}

func TestCheckpointFailedSaveKeepsPreviousFile(t *testing.T) {
	dir := t.TempDir()
	path, vars := smallCheckpoint(t, dir)
	before, _ := os.ReadFile(path)
	changed := nn.VariableList{graph.NewVariable("a", []int{2, 2}, graph.Float32, []float64{9, 9, 9, 9}), vars[1], vars[2]}
	for _, limit := range []int{0, 10, len(before) - 5, len(before) - 1} {
		restore := nn.FailSavesAfter(limit)
		err := nn.SaveCheckpoint(path, changed)
		restore()
		if err == nil || !errors.Is(err, nn.ErrCheckpoint) || !strings.Contains(err.Error(), "short write") {
			t.Fatalf("limit %d: save error %v, want a short write", limit, err)
		}
		after, _ := os.ReadFile(path)
		if string(after) != string(before) {
			t.Fatalf("limit %d: the previous checkpoint changed", limit)
		}
		if err := nn.RestoreCheckpoint(path, vars); err != nil {
			t.Fatalf("limit %d: previous checkpoint unreadable: %v", limit, err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Fatalf("limit %d: folder holds %v; the temporary file was left behind", limit, entries)
		}
	}
	// A folder that does not exist fails before touching anything.
	if err := nn.SaveCheckpoint(filepath.Join(dir, "no", "such", "x.ckpt"), vars); !errors.Is(err, os.ErrNotExist) || !errors.Is(err, nn.ErrCheckpoint) {
		t.Errorf("save into a missing folder: %v", err)
	}
	dup := nn.VariableList{vars[0], vars[0]}
	if err := nn.SaveCheckpoint(path, dup); err == nil || !strings.Contains(err.Error(), `two variables are named "a"`) {
		t.Errorf("duplicate names: %v", err)
	}
}

// resumeRun trains a model on a shuffled, batched dataset for a number of
// epochs, one dataset pass per epoch, as a notebook loop does.
type resumeRun struct {
	s     *strategy.Mirrored
	model *nn.Sequential
	opt   nn.Optimizer
	dist  *strategy.DistributedDataset
	step  func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor
}

func newResumeRun(t *testing.T) *resumeRun {
	t.Helper()
	r := &resumeRun{s: newStrategy(t, strategy.WithReplicas(2), strategy.WithDType(graph.Float32))}
	x := data.RandomNormal(11, 200, 6)
	y := data.RandomInts(12, 3, 200)
	// Shuffle, then batch, then shuffle the batches: two Shuffles, both
	// reshuffled at every epoch; the last batch of each epoch is partial.
	ds := data.FromTensorSlices(x, y).Shuffle(64, 5).Batch(16).Shuffle(4, 6).Prefetch(2)
	r.dist = r.s.DistributeDataset(ds)
	r.s.Scope(func() {
		r.model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(3))
		r.opt = nn.NewAdam(0.01)
		r.model.Build([]int{1, 6})
		nn.BuildOptimizer(r.opt, r.model.TrainableVariables())
	})
	r.step = strategytest.ClassifierStep(r.model, r.opt, 16)
	return r
}

// train runs steps until the run has taken stop steps in all (or the
// epochs end) and returns the iterator it stopped in, still open, or nil.
func (r *resumeRun) train(epochs, stop, done int, it *strategy.DistributedIterator, epoch int) *strategy.DistributedIterator {
	for ; epoch < epochs; epoch++ {
		if it == nil {
			it = r.dist.Iter()
		}
		for it.Next() {
			r.s.Run(r.step, it.Batch())
			if done++; done == stop {
				return it
			}
		}
		it = nil
	}
	return nil
}

func (r *resumeRun) weights() []float64 { return allWeights(r.s) }

// TestResumeInput: a shuffled run checkpointed with its input position at
// step 10 (or later, in another epoch) and restored into a new strategy,
// model and dataset continues bit for bit as the uninterrupted run, instead
// of starting its input over.
func TestResumeInput(t *testing.T) {
	const epochs = 3 // 13 batches each
	ref := newResumeRun(t)
	ref.train(epochs, -1, 0, nil, 0)
	want := ref.weights()
	for _, stop := range []int{10, 13, 20, 38} {
		t.Run(fmt.Sprintf("step-%d", stop), func(t *testing.T) {
			path := t.TempDir() + "/run.ckpt"
			first := newResumeRun(t)
			it := first.train(epochs, stop, 0, nil, 0)
			pos := nn.NewInputPosition("input")
			pos.Record(it)
			it.Close()
			if err := nn.SaveCheckpoint(path, nn.Join(first.s, pos)); err != nil {
				t.Fatal(err)
			}
			second := newResumeRun(t)
			restored := nn.NewInputPosition("input")
			if err := nn.RestoreCheckpoint(path, nn.Join(second.s, restored)); err != nil {
				t.Fatal(err)
			}
			resumed, err := restored.Resume(second.dist)
			if err != nil {
				t.Fatal(err)
			}
			second.train(epochs, -1, stop, resumed, restored.Epoch())
			if got := second.weights(); !slices.Equal(got, want) {
				t.Errorf("resumed at step %d (%v): weights differ from the uninterrupted run's (first %v, want %v)", stop, restored, got[:3], want[:3])
			}
		})
	}
}

func ExampleSaveCheckpoint() {
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.ckpt")

	s := strategy.NewMirrored(strategy.WithReplicas(2))
	var model *nn.Sequential
	s.Scope(func() {
		model = nn.NewSequential(nn.Dense(2))
		model.Build([]int{1, 3})
		nn.BuildOptimizer(nn.NewAdam(0.01), model.TrainableVariables())
	})
	if err := nn.SaveCheckpoint(path, s); err != nil {
		fmt.Println(err)
	}
	s.Close()

	// Restore into a strategy with another replica count.
	s2 := strategy.NewMirrored(strategy.WithReplicas(1))
	defer s2.Close()
	var model2 *nn.Sequential
	s2.Scope(func() {
		model2 = nn.NewSequential(nn.Dense(2))
		model2.Build([]int{1, 3})
		nn.BuildOptimizer(nn.NewAdam(0.01), model2.TrainableVariables())
	})
	if err := nn.RestoreCheckpoint(path, s2); err != nil {
		fmt.Println(err)
	}
	same := fmt.Sprint(model.Variables()[0].Value()) == fmt.Sprint(model2.Variables()[0].Value())
	fmt.Println("kernel restored:", same)
	// Output: kernel restored: true
}

func ExampleRestoreCheckpoint() {
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.ckpt")
	w := graph.NewVariable("w", []int{2}, graph.Float64, []float64{1.5, -2})
	if err := nn.SaveCheckpoint(path, nn.VariableList{w}); err != nil {
		fmt.Println(err)
	}
	w.Assign([]float64{0, 0})
	if err := nn.RestoreCheckpoint(path, nn.VariableList{w}); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("%.2f\n", w.Value())
	// A variable the file lacks is an error that names it.
	v := graph.NewVariable("v", []int{1}, graph.Float64, nil)
	err := nn.RestoreCheckpoint(path, nn.VariableList{w, v})
	fmt.Println(strings.Replace(err.Error(), path, "w.ckpt", 1))
	// Output:
	// [1.50 -2.00]
	// nn: checkpoint w.ckpt: variable "v" [1] is not in the file (it holds 1 variables: "w"); pass nn.PartialRestore() to keep its value
}

func ExampleReadCheckpointIndex() {
	dir, _ := os.MkdirTemp("", "ckpt")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.ckpt")
	vars := nn.VariableList{
		graph.NewVariable("dense/kernel", []int{3, 2}, graph.Float32, nil),
		graph.NewVariable("adam/iterations", []int{2}, graph.Float32, []float64{0, 5}),
	}
	if err := nn.SaveCheckpoint(path, vars); err != nil {
		fmt.Println(err)
	}
	entries, err := nn.ReadCheckpointIndex(path)
	if err != nil {
		fmt.Println(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name, e.DType, e.Shape, e.Values())
	}
	// Output:
	// dense/kernel float32 [3 2] [0 0 0 0 0 0]
	// adam/iterations float32 [2] [0 5]
}

func ExampleInputPosition() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	x := data.NewTensor([]int{8, 1}, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	dist := s.DistributeDataset(data.FromTensorSlices(x).Shuffle(8, 3).Batch(2))
	it := dist.Iter()
	it.Next()
	it.Next()
	pos := nn.NewInputPosition("input")
	pos.Record(it) // then nn.SaveCheckpoint(path, nn.Join(s, pos))
	fmt.Println(pos)
	resumed, _ := pos.Resume(dist) // after nn.RestoreCheckpoint(path, nn.Join(s, pos))
	for resumed.Next() && it.Next() {
		fmt.Println(nn.GatherBatch(resumed.Batch(), 0).Data, nn.GatherBatch(it.Batch(), 0).Data)
	}
	it.Close()
	// Output:
	// input: epoch 0, element 2
	// [5 7] [5 7]
	// [3 1] [3 1]
}

// BenchmarkCheckpoint saves and restores the weights and Adam slots of the
// 784-512-512-10 MLP (2 million float32 values).
func BenchmarkCheckpoint(b *testing.B) {
	var vars nn.VariableList
	for i, d := range [][2]int{{784, 512}, {512, 512}, {512, 10}} {
		for _, kind := range []string{"kernel", "m", "v"} {
			vars = append(vars, graph.NewVariable(fmt.Sprintf("dense_%d/%s", i, kind), d[:], graph.Float32, nil))
		}
	}
	var n int64
	for _, v := range vars {
		n += int64(4 * v.Len())
	}
	path := filepath.Join(b.TempDir(), "mlp.ckpt")
	b.Run("save", func(b *testing.B) {
		b.SetBytes(n)
		for range b.N {
			if err := nn.SaveCheckpoint(path, vars); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("restore", func(b *testing.B) {
		b.SetBytes(n)
		for range b.N {
			if err := nn.RestoreCheckpoint(path, vars); err != nil {
				b.Fatal(err)
			}
		}
	})
}
