// Package cluster joins a Go program to the other processes of its
// multi-worker job, as gotrain's notebook workers join theirs, so that
// [strategy.NewMultiWorkerMirrored] spans them all: every process runs the
// same program (SPMD), takes its replicas' shards of every global batch,
// and sums gradients with the others after each step. It is what a program
// exported from a notebook that used %workers calls at the start of main.
//
//	workers, err := cluster.JoinMPI()
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer workers.Close()
//	s := strategy.NewMultiWorkerMirrored() // across every rank
//
// # Building and running
//
// The workers are the ranks OpenMPI's mpirun starts; the binding is built
// only with the mpi build tag and cgo (Debian's libopenmpi-dev and
// openmpi-bin):
//
//	go build -tags mpi -o prog .
//	mpirun --bind-to none -np 2 ./prog
//
// --bind-to none keeps mpirun from binding each rank to one core, on which
// Go would run it with GOMAXPROCS=1. Started without mpirun, a program is a
// job of one rank. Built without the tag, [JoinMPI] returns an error that
// says to build with -tags mpi; the rest of the program builds as it is.
//
// # Invariants
//
// MPI is initialized once per process: JoinMPI after a JoinMPI (or after
// Close) fails. Every rank must make the same strategy calls in the same
// order, as every worker of a notebook runs the same cells; a rank that
// takes another path leaves the others waiting in a collective.
//
// # Concurrency
//
// JoinMPI and Close change the process's cluster (strategy.UseCluster),
// which strategies made afterwards use; call them from main, not while a
// strategy runs a step. An MPI's collectives are not safe for concurrent
// use; the strategy calls them from one goroutine at a time.
//
// # Errors
//
// A rank that dies ends the job: mpirun stops every other rank within
// seconds (OpenMPI has no fault tolerance). An MPI call that fails returns
// an error naming the call.
package cluster
