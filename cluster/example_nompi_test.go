//go:build !mpi

package cluster_test

import (
	"fmt"

	"github.com/gotrain/gotrain/cluster"
	"github.com/gotrain/gotrain/strategy"
)

// A program meant for mpirun joins the ranks at the start of main. Built
// without -tags mpi, as here, JoinMPI says how to build it.
func ExampleJoinMPI() {
	workers, err := cluster.JoinMPI()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer workers.Close()
	s := strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))
	fmt.Println("replicas in sync:", s.NumReplicasInSync())
	// Output:
	// cluster: joining the ranks mpirun started: this gotrain was built without MPI (build with -tags mpi; needs Debian's libopenmpi-dev)
}
