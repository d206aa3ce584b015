package mpi_test

import (
	"github.com/gotrain/gotrain/internal/mpi"
	"github.com/gotrain/gotrain/strategy"
)

// A World is what a multi-worker strategy reduces through, with the mpi tag
// and without.
var _ strategy.Cluster = (*mpi.World)(nil)
