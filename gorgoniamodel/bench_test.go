package gorgoniamodel

import (
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/bench"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// The MLP of `gotrain bench mlp` and graph's BenchmarkMLP, so the figures
// compare gorgonia with gotrain's engine on one workload: 784-512-512-10, ReLU, softmax cross-entropy, Adam, float32, one fixed
// random global batch of 256.
var benchDims = []int{784, 512, 512, 10}

const benchBatch = 256

// dense adds a layer x·w + b (ReLU unless last) with parameters made by
// param, and returns its output.
func dense(x *G.Node, i int, last bool, param func(name string, shape []int) *G.Node) *G.Node {
	w := param("w"+string(rune('0'+i)), []int{benchDims[i], benchDims[i+1]})
	b := param("b"+string(rune('0'+i)), []int{benchDims[i+1]})
	h := G.Must(G.BroadcastAdd(G.Must(G.Mul(x, w)), b, nil, []byte{0}))
	if last {
		return h
	}
	return G.Must(G.Rectify(h))
}

func benchMLP(r *Replica, x, y *G.Node) *G.Node {
	param := func(name string, shape []int) *G.Node { return r.Param(name, shape, GlorotU(1)) }
	h := x
	for i := range len(benchDims) - 1 {
		h = dense(h, i, i == len(benchDims)-2, param)
	}
	ce := G.Must(G.Neg(G.Must(G.Sum(G.Must(G.HadamardProd(r.OneHot(y, benchDims[3]), G.Must(G.LogSoftMax(h)))), 1))))
	return r.AverageLoss(ce)
}

func benchData() (x, y data.Tensor) {
	return data.RandomNormal(1, benchBatch, benchDims[0]), data.RandomInts(2, benchDims[3], benchBatch)
}

// BenchmarkMLP trains the MLP through the bridge (1 and 2 replicas), through
// plain gorgonia (its TapeMachine and its Adam on one graph, with the same
// BLAS) and through gotrain's own engine (1 and 2 replicas), reporting
// samples/s; scripts/bench.sh gorgonia prints them as ratios.
func BenchmarkMLP(b *testing.B) {
	for _, replicas := range []int{1, 2} {
		b.Run("bridge/replicas="+string(rune('0'+replicas)), func(b *testing.B) {
			s := strategy.NewMirrored(strategy.WithReplicas(replicas))
			defer s.Close()
			var model *Model
			var opt nn.Optimizer
			s.Scope(func() {
				model = New(benchMLP)
				opt = nn.NewAdam(1e-3)
			})
			x, y := benchData()
			it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(benchBatch)).Iter()
			defer it.Close()
			it.Next()
			batch := it.Batch()
			model.Step(opt, batch) // builds the graphs
			b.ResetTimer()
			for b.Loop() {
				model.Step(opt, batch)
			}
			b.ReportMetric(float64(benchBatch*b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
	b.Run("gorgonia/replicas=1", func(b *testing.B) {
		useBLAS()
		g := G.NewGraph()
		var params G.Nodes
		param := func(name string, shape []int) *G.Node {
			n := G.NewTensor(g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithInit(G.GlorotU(1)))
			params = append(params, n)
			return n
		}
		xs, ys := benchData()
		x := G.NewMatrix(g, tensor.Float32, G.WithShape(benchBatch, benchDims[0]), G.WithName("x"), G.WithValue(toDense(xs.Data, benchBatch, benchDims[0])))
		onehot := make([]float64, benchBatch*benchDims[3])
		for i, c := range ys.Data {
			onehot[i*benchDims[3]+int(c)] = 1
		}
		y := G.NewMatrix(g, tensor.Float32, G.WithShape(benchBatch, benchDims[3]), G.WithName("y"), G.WithValue(toDense(onehot, benchBatch, benchDims[3])))
		h := x
		for i := range len(benchDims) - 1 {
			h = dense(h, i, i == len(benchDims)-2, param)
		}
		loss := G.Must(G.Mean(G.Must(G.Neg(G.Must(G.Sum(G.Must(G.HadamardProd(y, G.Must(G.LogSoftMax(h)))), 1))))))
		if _, err := G.Grad(loss, params...); err != nil {
			b.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(params...))
		defer vm.Close()
		solver := G.NewAdamSolver(G.WithLearnRate(1e-3))
		step := func() {
			if err := vm.RunAll(); err != nil {
				b.Fatal(err)
			}
			if err := solver.Step(G.NodesToValueGrads(params)); err != nil {
				b.Fatal(err)
			}
			vm.Reset()
		}
		step()
		b.ResetTimer()
		for b.Loop() {
			step()
		}
		b.ReportMetric(float64(benchBatch*b.N)/b.Elapsed().Seconds(), "samples/s")
	})
	for _, replicas := range []int{1, 2} {
		b.Run("gotrain/replicas="+string(rune('0'+replicas)), func(b *testing.B) {
			rate, err := bench.MLP(replicas, benchDims, benchBatch, b.N, graph.Float32)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(rate, "samples/s")
		})
	}
}

func toDense(vals []float64, rows, cols int) *tensor.Dense {
	f := make([]float32, len(vals))
	for i, v := range vals {
		f[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(f))
}
