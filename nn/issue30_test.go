package nn_test

import (
	"errors"
	"testing"

	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

// replicaAware is a model whose Call reads its context, as a model that
// seeds something per replica does.
type replicaAware struct {
	d                 *nn.DenseLayer
	replica, replicas int  // what Call read
	sameGraph         bool // ctx.Graph() is x's graph
}

func (m *replicaAware) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {
	m.replica, m.replicas = ctx.ReplicaID(), ctx.NumReplicasInSync()
	m.sameGraph = ctx.Graph() == x.Graph()
	return m.d.Call(ctx, x, training)
}

func (m *replicaAware) Variables() []*nn.Variable { return nn.VariablesOf(m.d) }

// TestIssue30BuildGivesAContext: nn.Build calls the model with replica 0's
// context, not nil, so a Call that reads ctx.ReplicaID() builds, in either
// dtype.
func TestIssue30BuildGivesAContext(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float64} {
		t.Run(dt.String(), func(t *testing.T) {
			s := newStrategy(t, strategy.WithReplicas(2), strategy.WithDType(dt))
			m := &replicaAware{replica: -1}
			s.Scope(func() {
				m.d = nn.Dense(3)
				nn.Build(m, 1, 4)
			})
			if m.replica != 0 || m.replicas != 2 || !m.sameGraph {
				t.Errorf("Build's context: ReplicaID %d, NumReplicasInSync %d, graph is the input's %v; want 0, 2, true", m.replica, m.replicas, m.sameGraph)
			}
			if got := m.d.Variables()[0].Shape(); len(got) != 2 || got[0] != 4 || got[1] != 3 {
				t.Errorf("the dense kernel after Build has shape %v, want [4 3]", got)
			}
		})
	}
	s := newStrategy(t) // Float64
	err, _ := panics(func() { s.BuildContext(graph.New(graph.Float32)) }).(error)
	if !errors.Is(err, strategy.ErrUsage) {
		t.Errorf("BuildContext with a graph of another dtype: %v, want an error wrapping ErrUsage", err)
	}
}
