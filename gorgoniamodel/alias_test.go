package gorgoniamodel

import (
	"testing"
	"unsafe"

	G "gorgonia.org/gorgonia"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// TestParametersShareStorage checks the binding itself: after steps, every
// replica's parameter node still holds the strategy variable's storage (the
// same first element's address), so updates and restores reach every graph
// without a copy.
func TestParametersShareStorage(t *testing.T) {
	s := strategy.NewMirrored(strategy.WithReplicas(3))
	defer s.Close()
	var m *Model
	s.Scope(func() {
		m = New(func(r *Replica, x, y *G.Node) *G.Node {
			w := r.Param("w", []int{4, 3}, GlorotU(1))
			return r.AverageLoss(G.Must(G.Sum(G.Must(G.Mul(x, w)), 1)))
		})
	})
	it := s.DistributeDataset(data.FromTensorSlices(data.RandomNormal(1, 30, 4)).Batch(9)).Iter()
	defer it.Close()
	opt := nn.NewAdam(0.1)
	for it.Next() {
		m.Step(opt, it.Batch())
	}
	v := m.Variables()[0]
	if len(m.sets) == 0 {
		t.Fatal("no machines were built")
	}
	for _, set := range m.sets {
		for r, mc := range set.reps {
			got := mc.r.params[0].Value().Data().([]float32)
			if unsafe.SliceData(got) != unsafe.SliceData(v.F32()) {
				t.Errorf("replica %d's node holds a copy of %s", r, v.Name())
			}
		}
	}
}
