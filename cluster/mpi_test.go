//go:build mpi && cgo

package cluster_test

import (
	"testing"

	"github.com/gotrain/gotrain/cluster"
	"github.com/gotrain/gotrain/strategy"
)

// TestIssue33JoinMPI joins the job this test binary runs in (a singleton
// without mpirun, or the ranks of mpirun -np N), checks every rank sees
// the same size and a strategy spans them, and leaves.
func TestIssue33JoinMPI(t *testing.T) {
	m, err := cluster.JoinMPI()
	if err != nil {
		t.Fatal(err)
	}
	if m.Rank() < 0 || m.Rank() >= m.Size() {
		t.Errorf("rank %d of %d", m.Rank(), m.Size())
	}
	s := strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))
	if got := s.NumReplicasInSync(); got != m.Size() {
		t.Errorf("NumReplicasInSync = %d, want one per rank: %d", got, m.Size())
	}
	buf := []float64{1}
	if err := m.AllReduceF64(buf); err != nil || buf[0] != float64(m.Size()) {
		t.Errorf("AllReduceF64([1]) = %v, %v; want [%d]", buf, err, m.Size())
	}
	s.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.JoinMPI(); err == nil {
		t.Error("JoinMPI after Close: no error, want MPI's refusal to start again")
	}
}
