package strategy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// TestIssue14Undistributed: a global batch passed to Run without
// distributing it is refused on several replicas, since every replica would
// train on all of it; Broadcast gives every replica the same value on
// purpose.
func TestIssue14Undistributed(t *testing.T) {
	x := data.NewTensor([]int{4, 2}, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	sum := func(x *nn.Tensor) *nn.Tensor { return graph.Sum(x) }
	tests := []struct {
		name     string
		replicas int
		arg      func(s *strategy.Mirrored) any
		want     []float64 // each replica's sum; nil: an error
		wantErr  string
	}{
		{"plain-batch", 2, func(*strategy.Mirrored) any { return x }, nil,
			"strategy: Run: argument 0: a data.Tensor of shape [4 2] is not distributed, so each of the 2 replicas would run on all 4 rows; " +
				"iterate s.DistributeDataset(ds) and pass it.Batch(), or pass s.Broadcast(t) to give every replica the same value on purpose"},
		{"broadcast", 2, func(s *strategy.Mirrored) any { return s.Broadcast(x) }, []float64{36, 36}, ""},
		{"distributed", 2, func(s *strategy.Mirrored) any {
			it := s.DistributeDataset(data.FromTensorSlices(x).Batch(4)).Iter()
			t.Cleanup(it.Close)
			it.Next()
			return it.Batch()
		}, []float64{10, 26}, ""},
		{"one-replica", 1, func(*strategy.Mirrored) any { return x }, []float64{36}, ""},
		{"scalar", 2, func(*strategy.Mirrored) any { return data.NewTensor(nil, []float64{3}) }, []float64{3, 3}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy.NewMirrored(strategy.WithReplicas(tt.replicas), strategy.WithDType(graph.Float64))
			defer closeStrategy(t, s)
			out, err := s.TryRun(sum, tt.arg(s))
			if tt.want == nil {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("TryRun error:\n got %v\nwant %s", err, tt.wantErr)
				}
				if !errors.Is(err, strategy.ErrUsage) {
					t.Errorf("error %v does not wrap ErrUsage", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("TryRun: %v", err)
			}
			var got []float64
			for _, v := range out.Values() {
				got = append(got, v.Scalar())
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("replica sums %v, want %v", got, tt.want)
			}
		})
	}
}

func ExampleMirrored_Broadcast() {
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer s.Close()
	table := data.NewTensor([]int{3}, []float64{1, 2, 3})
	out := s.Run(func(ctx *strategy.ReplicaContext, t *nn.Tensor) *nn.Tensor { return graph.Sum(t) }, s.Broadcast(table))
	for r, v := range out.Values() {
		fmt.Printf("replica %d: %.1f\n", r, v.Scalar())
	}
	// Output:
	// replica 0: 6.0
	// replica 1: 6.0
}
