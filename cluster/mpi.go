package cluster

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/mpi"
	"github.com/gotrain/gotrain/strategy"
)

// ErrNoMPI is what [JoinMPI] returns, wrapped, in a program built without
// the mpi tag; its text says to build with -tags mpi.
var ErrNoMPI = mpi.ErrNoMPI

// MPI is this process's place among the ranks mpirun started. It
// implements [strategy.Cluster].
type MPI struct {
	w *mpi.World
}

var _ strategy.Cluster = (*MPI)(nil)

// JoinMPI joins the ranks mpirun started this process with and makes them
// the process's cluster, so that strategy.NewMultiWorkerMirrored spans
// them. Without mpirun the job is this process alone. In a program built
// without -tags mpi it returns an error saying so.
func JoinMPI() (*MPI, error) {
	w, err := mpi.Init()
	if err != nil {
		return nil, fmt.Errorf("cluster: joining the ranks mpirun started: %w", err)
	}
	m := &MPI{w: w}
	strategy.UseCluster(m)
	return m, nil
}

// Close leaves the job: strategies made afterwards are of this process
// alone, and MPI is finalized, which waits for every other rank to Close
// too. MPI cannot be joined again in this process.
func (m *MPI) Close() error {
	strategy.UseCluster(nil)
	if err := m.w.Finalize(); err != nil {
		return fmt.Errorf("cluster: leaving the job: %w", err)
	}
	return nil
}

// Rank returns this process's rank, in [0, Size).
func (m *MPI) Rank() int { return m.w.Rank() }

// Size returns the number of ranks in the job.
func (m *MPI) Size() int { return m.w.Size() }

// AllReduceF32 replaces buf with its element-wise sum over the ranks.
func (m *MPI) AllReduceF32(buf []float32) error { return m.w.AllReduceF32(buf) }

// AllReduceF64 replaces buf with its element-wise sum over the ranks.
func (m *MPI) AllReduceF64(buf []float64) error { return m.w.AllReduceF64(buf) }

// AllGather returns every rank's local slice, in rank order.
func (m *MPI) AllGather(local []float64) ([][]float64, error) { return m.w.AllGather(local) }

// Broadcast returns root's buf on every rank.
func (m *MPI) Broadcast(buf []byte, root int) ([]byte, error) { return m.w.Broadcast(buf, root) }
