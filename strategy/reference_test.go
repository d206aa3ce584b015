package strategy_test

import (
	"math"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/strategy/strategytest"
)

// refMLP is an independent reference: a tanh MLP with one hidden layer and a
// softmax cross-entropy loss averaged over a fixed global batch, with its
// gradient written out by hand in plain loops.
type refMLP struct {
	in, hid, out   int
	w1, b1, w2, b2 []float64
}

// grads returns the loss sum(ce)/globalBatch over rows and its gradients.
func (m *refMLP) grads(x, y []float64, rows, globalBatch int) (loss float64, g [][]float64) {
	gw1, gb1 := make([]float64, len(m.w1)), make([]float64, len(m.b1))
	gw2, gb2 := make([]float64, len(m.w2)), make([]float64, len(m.b2))
	for r := range rows {
		xr := x[r*m.in : (r+1)*m.in]
		h := make([]float64, m.hid)
		for j := range m.hid {
			s := m.b1[j]
			for i := range m.in {
				s += xr[i] * m.w1[i*m.hid+j]
			}
			h[j] = math.Tanh(s)
		}
		z := make([]float64, m.out)
		zmax := math.Inf(-1)
		for k := range m.out {
			s := m.b2[k]
			for j := range m.hid {
				s += h[j] * m.w2[j*m.out+k]
			}
			z[k] = s
			zmax = max(zmax, s)
		}
		sum := 0.0
		for k := range z {
			sum += math.Exp(z[k] - zmax)
		}
		label := int(y[r])
		loss += (math.Log(sum) + zmax - z[label]) / float64(globalBatch)
		// dL/dz = (softmax - onehot) / globalBatch
		dz := make([]float64, m.out)
		for k := range z {
			dz[k] = math.Exp(z[k]-zmax) / sum
			if k == label {
				dz[k]--
			}
			dz[k] /= float64(globalBatch)
			gb2[k] += dz[k]
		}
		dh := make([]float64, m.hid)
		for j := range m.hid {
			for k := range m.out {
				gw2[j*m.out+k] += h[j] * dz[k]
				dh[j] += m.w2[j*m.out+k] * dz[k]
			}
			dh[j] *= 1 - h[j]*h[j]
			gb1[j] += dh[j]
			for i := range m.in {
				gw1[i*m.hid+j] += xr[i] * dh[j]
			}
		}
	}
	return loss, [][]float64{gw1, gb1, gw2, gb2}
}

func (m *refMLP) params() [][]float64 { return [][]float64{m.w1, m.b1, m.w2, m.b2} }

// TestOneReplicaMatchesReference trains with the strategy (1 replica,
// float64) and with the hand-written reference, step by step.
func TestOneReplicaMatchesReference(t *testing.T) {
	const (
		rows, in, hid, out = 37, 5, 6, 3
		globalBatch        = 8 // 37 rows: a partial last batch of 5
		lr                 = 0.05
	)
	type refOpt func(p, g []float64, slot [][]float64, step int)
	sgd := func(mom float64, nesterov bool) refOpt {
		return func(p, g []float64, slot [][]float64, _ int) {
			for i := range p {
				slot[0][i] = mom*slot[0][i] + g[i]
				d := slot[0][i]
				if nesterov {
					d = g[i] + mom*slot[0][i]
				}
				p[i] -= lr * d
			}
		}
	}
	adam := func(p, g []float64, slot [][]float64, step int) {
		const b1, b2, eps = 0.9, 0.999, 1e-7
		for i := range p {
			slot[0][i] = b1*slot[0][i] + (1-b1)*g[i]
			slot[1][i] = b2*slot[1][i] + (1-b2)*g[i]*g[i]
			mhat := slot[0][i] / (1 - math.Pow(b1, float64(step)))
			vhat := slot[1][i] / (1 - math.Pow(b2, float64(step)))
			p[i] -= lr * mhat / (math.Sqrt(vhat) + eps) // PyTorch's formula
		}
	}
	tests := []struct {
		name string
		opt  func() nn.Optimizer
		ref  refOpt
	}{
		{"sgd", func() nn.Optimizer { return nn.NewSGD(lr) }, sgd(0, false)},
		{"sgd-momentum", func() nn.Optimizer { return nn.NewSGD(lr, nn.WithMomentum(0.9)) }, sgd(0.9, false)},
		{"sgd-nesterov", func() nn.Optimizer { return nn.NewSGD(lr, nn.WithMomentum(0.9), nn.WithNesterov()) }, sgd(0.9, true)},
		{"adam", func() nn.Optimizer { return nn.NewAdam(lr) }, adam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy.NewOneDevice(strategy.WithDType(graph.Float64))
			defer closeStrategy(t, s)
			x := data.RandomNormal(21, rows, in)
			y := data.RandomInts(22, out, rows)
			var model *nn.Sequential
			var opt nn.Optimizer
			s.Scope(func() {
				model = nn.NewSequential(nn.Dense(hid, nn.Tanh), nn.Dense(out))
				model.Build([]int{globalBatch, in})
				opt = tt.opt()
			})
			vars := model.TrainableVariables()
			ref := &refMLP{in: in, hid: hid, out: out,
				w1: vars[0].Value(), b1: vars[1].Value(), w2: vars[2].Value(), b2: vars[3].Value()}
			slots := make([][][]float64, 4)
			for i, p := range ref.params() {
				slots[i] = [][]float64{make([]float64, len(p)), make([]float64, len(p))}
			}
			step := strategytest.ClassifierStep(model, opt, globalBatch)
			dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(globalBatch).Repeat(2))
			k := 0
			for it := dist.Iter(); it.Next(); k++ {
				got := s.Reduce(strategy.Sum, s.Run(step, it.Batch())).Scalar()
				const batchesPerEpoch = (rows + globalBatch - 1) / globalBatch
				lo := (k % batchesPerEpoch) * globalBatch
				n := min(globalBatch, rows-lo)
				want, g := ref.grads(x.Data[lo*in:(lo+n)*in], y.Data[lo:lo+n], n, globalBatch)
				for i, p := range ref.params() {
					tt.ref(p, g[i], slots[i], k+1)
				}
				if math.Abs(got-want) > 1e-12*math.Abs(want) {
					t.Errorf("step %d: loss %.15g, reference %.15g", k, got, want)
				}
			}
			if k != 10 {
				t.Fatalf("ran %d steps, want 10", k)
			}
			for i, p := range ref.params() {
				if r := maxRelDiff(vars[i].Value(), p); r > 1e-12 {
					t.Errorf("%s: relative difference %.3g from the reference, want ≤ 1e-12\ngot  %v\nwant %v", vars[i].Name(), r, vars[i].Value(), p)
				}
			}
		})
	}
}
