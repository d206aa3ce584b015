//go:build !mpi

package cluster_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/cluster"
	"github.com/gotrain/gotrain/strategy"
)

// TestIssue33JoinWithoutMPI: a program built without the tag gets an error
// it can match and that says to build with -tags mpi, and its strategies
// stay single-worker.
func TestIssue33JoinWithoutMPI(t *testing.T) {
	m, err := cluster.JoinMPI()
	if m != nil || !errors.Is(err, cluster.ErrNoMPI) {
		t.Fatalf("JoinMPI() = %v, %v; want nil, an error wrapping ErrNoMPI", m, err)
	}
	if want := "-tags mpi"; !strings.Contains(err.Error(), want) {
		t.Errorf("JoinMPI: %q does not say %q", err, want)
	}
	if s := strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1)); s.NumReplicasInSync() != 1 {
		t.Errorf("after a failed JoinMPI, NumReplicasInSync = %d, want 1", s.NumReplicasInSync())
	}
}
