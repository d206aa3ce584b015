package graph_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/blas"
	"github.com/gotrain/gotrain/internal/loops"
)

// BenchmarkMLP is the reference workload that `gotrain bench mlp` runs and
// scripts/bench.sh compares with PyTorch's torch_mlp.py (which also runs
// Adam): a 784-512-512-10 ReLU perceptron, batch 256, float32, one OpenBLAS
// thread.
func BenchmarkMLP(b *testing.B) { benchMLP(b, 1) }

// BenchmarkMLPAllThreads lets OpenBLAS use every core, as torch_mlp.py
// "single 1" does: torch.set_num_threads does not limit Debian's OpenBLAS
// pthreads (measured: 150% CPU on 2 cores unless OPENBLAS_NUM_THREADS=1).
func BenchmarkMLPAllThreads(b *testing.B) { benchMLP(b, runtime.NumCPU()) }

func benchMLP(b *testing.B, threads int) {
	prev := blas.Threads()
	blas.SetThreads(threads)
	defer blas.SetThreads(prev)
	const batch = 256
	sizes := []int{784, 512, 512, 10}
	r := rand.New(rand.NewPCG(1, 1))
	g := graph.New(graph.Float32)
	x := g.Placeholder("x", batch, sizes[0])
	y := g.Placeholder("y", batch)
	h := x
	var vars []*graph.Variable
	var xs []*graph.Node
	for l := 1; l < len(sizes); l++ {
		w := make([]float64, sizes[l-1]*sizes[l])
		for i := range w {
			w[i] = r.NormFloat64() * 0.05
		}
		wv := graph.NewVariable("kernel", []int{sizes[l-1], sizes[l]}, graph.Float32, w)
		bv := graph.NewVariable("bias", []int{sizes[l]}, graph.Float32, nil)
		vars = append(vars, wv, bv)
		xs = append(xs, g.Var(wv), g.Var(bv))
		act := graph.ReLU
		if l == len(sizes)-1 {
			act = graph.Linear
		}
		h = graph.Dense(h, g.Var(wv), g.Var(bv), act)
	}
	loss := graph.Mean(graph.SparseSoftmaxCrossEntropy(y, h))
	grads := g.Gradients(loss, xs)
	p, err := g.Compile(append([]*graph.Node{loss}, grads...)...)
	if err != nil {
		b.Fatal(err)
	}
	xb, yb := p.F32(x), p.F32(y)
	for i := range xb {
		xb[i] = float32(r.Float64())
	}
	for i := range yb {
		yb[i] = float32(r.IntN(10))
	}
	gb := make([][]float32, len(grads))
	m := make([][]float32, len(grads))
	v := make([][]float32, len(grads))
	for i := range grads {
		gb[i] = p.F32(grads[i])
		m[i] = make([]float32, len(gb[i]))
		v[i] = make([]float32, len(gb[i]))
	}
	run := func(b *testing.B, adam bool) {
		b.ReportAllocs()
		step := 0
		for b.Loop() {
			if err := p.Run(); err != nil {
				b.Fatal(err)
			}
			if adam {
				step++
				for i, vr := range vars {
					loops.AdamUpdate(vr.F32(), gb[i], m[i], v[i], 1e-3, 0.9, 0.999, 1e-8, step)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
	}
	b.Run("fwd+bwd", func(b *testing.B) { run(b, false) })
	b.Run("fwd+bwd+adam", func(b *testing.B) { run(b, true) })
}
