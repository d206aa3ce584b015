package nn_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// metricData is 23 examples: 23 divides neither by the batch (6) nor by
// the replicas (3), so the last batch is padded on some replicas.
func metricData() (probs, scores, labels, classes data.Tensor) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, c = 23, 4
	probs = data.Zeros(n, c)
	scores = data.Zeros(n)
	labels = data.Zeros(n)
	classes = data.Zeros(n)
	for i := range n {
		for j := range c {
			probs.Data[i*c+j] = r.Float64()
		}
		labels.Data[i] = float64(r.IntN(2))
		// Scores lean towards the label, with overlap; a few sit exactly on
		// thresholds of a 200-threshold AUC.
		scores.Data[i] = math.Min(1, math.Max(0, 0.3*labels.Data[i]+0.7*r.Float64()))
		if i%7 == 0 {
			scores.Data[i] = float64(i%5) / 199
		}
		classes.Data[i] = float64(r.IntN(c))
	}
	return
}

// exactAUC is Keras's thresholded ROC AUC computed naively over all data.
func exactAUC(labels, scores []float64, n int) float64 {
	th := make([]float64, n)
	th[0] = -1e-7
	for i := 1; i < n-1; i++ {
		th[i] = float64(i) / float64(n-1)
	}
	th[n-1] = 1 + 1e-7
	tpr, fpr := make([]float64, n), make([]float64, n)
	for j, t := range th {
		var tp, fp, p, q float64
		for i, s := range scores {
			if labels[i] != 0 {
				p++
				if s > t {
					tp++
				}
			} else {
				q++
				if s > t {
					fp++
				}
			}
		}
		tpr[j], fpr[j] = tp/p, fp/q
	}
	var auc float64
	for j := range n - 1 {
		auc += (fpr[j] - fpr[j+1]) * (tpr[j] + tpr[j+1]) / 2
	}
	return auc
}

// rankAUC is the exact ROC AUC (probability a positive outranks a
// negative, ties half).
func rankAUC(labels, scores []float64) float64 {
	var pos, neg []float64
	for i, s := range scores {
		if labels[i] != 0 {
			pos = append(pos, s)
		} else {
			neg = append(neg, s)
		}
	}
	sort.Float64s(neg)
	var sum float64
	for _, p := range pos {
		for _, q := range neg {
			switch {
			case p > q:
				sum++
			case p == q:
				sum += 0.5
			}
		}
	}
	return sum / float64(len(pos)*len(neg))
}

func TestMetricsOverPaddedBatchesEqualExact(t *testing.T) {
	probs, scores, labels, classes := metricData()
	// Exact values over the whole data, by hand.
	var correct, tp, fp, fn float64
	for i := range 23 {
		row := probs.Data[4*i : 4*i+4]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if float64(best) == classes.Data[i] {
			correct++
		}
		pos, pred := labels.Data[i] != 0, scores.Data[i] > 0.5
		switch {
		case pos && pred:
			tp++
		case pred:
			fp++
		case pos:
			fn++
		}
	}
	var sum float64
	for _, v := range scores.Data {
		sum += v
	}
	want := map[string]float64{
		"mean":      sum / 23,
		"accuracy":  correct / 23,
		"precision": tp / (tp + fp),
		"recall":    tp / (tp + fn),
		"auc":       exactAUC(labels.Data, scores.Data, 200),
	}
	if d := math.Abs(want["auc"] - rankAUC(labels.Data, scores.Data)); d > 0.02 {
		t.Fatalf("thresholded AUC %v is %v from the exact rank AUC; the reference is off", want["auc"], d)
	}
	for _, replicas := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			s := newStrategy(t, strategy.WithReplicas(replicas))
			mean, acc, accBatch := nn.NewMean("score"), &nn.SparseCategoricalAccuracy{}, &nn.SparseCategoricalAccuracy{}
			prec, rec, auc := nn.NewPrecision(0.5), nn.NewRecall(0.5), nn.NewAUC(200)
			type out struct{ Probs, Scores, Labels, Classes *nn.Tensor }
			step := func(p, sc, l, c *nn.Tensor) out {
				// Computed outputs pass through the replica's program; the
				// label inputs come back as they are.
				return out{graph.Scale(p, 1), graph.Scale(sc, 1), l, c}
			}
			dist := s.DistributeDataset(data.FromTensorSlices(probs, scores, labels, classes).Batch(6))
			metrics := []nn.Metric{mean, acc, accBatch, prec, rec, auc}
			for epoch := range 2 {
				for _, m := range metrics {
					m.Reset()
				}
				it := dist.Iter()
				for it.Next() {
					o := s.Run(step, it.Batch())
					mean.UpdateReplicas(s, o.Field("Scores"))
					acc.UpdateReplicas(s, o.Field("Classes"), o.Field("Probs"))
					accBatch.Update(nn.GatherBatch(it.Batch(), 3), s.Gather(o.Field("Probs"), 0))
					prec.UpdateReplicas(s, o.Field("Labels"), o.Field("Scores"))
					rec.UpdateReplicas(s, o.Field("Labels"), o.Field("Scores"))
					auc.UpdateReplicas(s, o.Field("Labels"), o.Field("Scores"))
				}
				if err := it.Err(); err != nil {
					t.Fatal(err)
				}
				it.Close()
				for _, m := range metrics {
					name := m.Name()
					if name == "score" {
						name = "mean"
					}
					if got := m.Result(); math.Abs(got-want[name]) > 1e-12 {
						t.Errorf("epoch %d: %s = %.15g, exact %.15g", epoch, m.Name(), got, want[name])
					}
				}
			}
		})
	}
}

func TestMeanWeights(t *testing.T) {
	tests := []struct {
		name   string
		values data.Tensor
		w      []data.Tensor
		want   float64
	}{
		{"plain", data.NewTensor([]int{3}, []float64{1, 2, 6}), nil, 3},
		{"per-value", data.NewTensor([]int{3}, []float64{1, 2, 6}), []data.Tensor{data.NewTensor([]int{3}, []float64{1, 1, 0})}, 1.5},
		{"per-row", data.NewTensor([]int{2, 2}, []float64{1, 3, 10, 20}), []data.Tensor{data.NewTensor([]int{2}, []float64{1, 0})}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m nn.Mean
			m.Update(tt.values, tt.w...)
			if got := m.Result(); math.Abs(got-tt.want) > 1e-15 {
				t.Errorf("Result() = %v, want %v", got, tt.want)
			}
		})
	}
	var m nn.Mean
	if v := panics(func() { m.Update(data.Zeros(3), data.Zeros(2)) }); v == nil || !errors.Is(v.(error), nn.ErrShape) {
		t.Errorf("mismatched weights: panic %v, want nn.ErrShape", v)
	}
}

func TestMetricMisuse(t *testing.T) {
	s := newStrategy(t)
	for name, fn := range map[string]func(){
		"auc-thresholds":  func() { nn.NewAUC(1) },
		"auc-zero-value":  func() { (&nn.AUC{}).Update(data.Zeros(1), data.Zeros(1)) },
		"precision-nan":   func() { nn.NewPrecision(math.NaN()) },
		"scalar-replicas": func() { nn.NewMean("").UpdateReplicas(s, strategy.NewPerReplica(data.Zeros())) },
		"gather-batch":    func() { nn.GatherBatch(nil, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			v := panics(fn)
			if err, ok := v.(error); !ok || !errors.Is(err, nn.ErrUsage) {
				t.Errorf("panic %v, want an error wrapping nn.ErrUsage", v)
			}
		})
	}
	acc := &nn.SparseCategoricalAccuracy{}
	if v := panics(func() { acc.Update(data.Zeros(3), data.Zeros(2, 4)) }); v == nil || !errors.Is(v.(error), nn.ErrShape) {
		t.Errorf("accuracy shapes: panic %v, want nn.ErrShape", v)
	}
}

func ExampleMean() {
	m := nn.NewMean("loss")
	m.Update(data.NewTensor([]int{2}, []float64{0.5, 1.5}))
	m.Update(data.NewTensor([]int{1}, []float64{4}))
	fmt.Println(nn.MetricString(m))
	m.Reset()
	fmt.Println(nn.MetricString(m))
	// Output:
	// loss: 2.0000
	// loss: 0.0000
}

func ExampleSparseCategoricalAccuracy() {
	var acc nn.SparseCategoricalAccuracy
	labels := data.NewTensor([]int{3}, []float64{0, 1, 1})
	logits := data.NewTensor([]int{3, 2}, []float64{2, 1, 0, 3, 5, -1})
	acc.Update(labels, logits)
	fmt.Printf("%.4f\n", acc.Result())
	// Output: 0.6667
}

func ExampleNewPrecision() {
	p := nn.NewPrecision(0.5)
	p.Update(data.NewTensor([]int{4}, []float64{1, 0, 1, 0}), data.NewTensor([]int{4}, []float64{0.9, 0.8, 0.3, 0.1}))
	fmt.Printf("%.2f\n", p.Result())
	// Output: 0.50
}

func ExampleNewRecall() {
	r := nn.NewRecall(0.5)
	r.Update(data.NewTensor([]int{4}, []float64{1, 1, 1, 0}), data.NewTensor([]int{4}, []float64{0.9, 0.6, 0.3, 0.7}))
	fmt.Printf("%.4f\n", r.Result())
	// Output: 0.6667
}

func ExampleNewAUC() {
	auc := nn.NewAUC(200)
	labels := data.NewTensor([]int{4}, []float64{0, 0, 1, 1})
	auc.Update(labels, data.NewTensor([]int{4}, []float64{0.1, 0.4, 0.35, 0.8}))
	fmt.Printf("%.4f\n", auc.Result())
	// Output: 0.7500
}

// Metrics over an epoch whose last batch is padded: the step returns its
// predictions and labels, and UpdateReplicas keeps only the real rows.
func ExampleGatherBatch() {
	s := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer s.Close()
	x := data.NewTensor([]int{5, 2}, []float64{1, 0, 0, 1, 1, 0, 0, 1, 0, 1})
	y := data.NewTensor([]int{5}, []float64{0, 1, 1, 1, 1})
	acc := &nn.SparseCategoricalAccuracy{}
	step := func(x, y *nn.Tensor) *nn.Tensor { return graph.Scale(x, 1) } // x holds the "logits"
	for it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(4)).Iter(); it.Next(); {
		logits := s.Run(step, it.Batch())
		acc.Update(nn.GatherBatch(it.Batch(), 1), s.Gather(logits, 0))
	}
	fmt.Printf("accuracy %.2f over 5 examples\n", acc.Result())
	// Output: accuracy 0.80 over 5 examples
}
