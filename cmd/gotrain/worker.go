package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/gotrain/gotrain/internal/loopback"
	"github.com/gotrain/gotrain/internal/mpi"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
	"github.com/gotrain/gotrain/strategy"
	"github.com/gotrain/gotrain/worker"
)

// runWorker holds the user's session for a kernel: `gotrain kernel` starts
// it with --connect and the token in worker.TokenEnv. It exits when the
// kernel says shutdown or goes away.
func runWorker(args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("gotrain worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "the kernel's `ADDRESS`: unix:PATH or tcp:HOST:PORT")
	memLimit := fs.Int64("memory-limit", 0, "memory limit in `BYTES` (0: none), as %limit memory sets it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" || fs.NArg() != 0 {
		return fmt.Errorf("gotrain worker: want --connect ADDRESS and no other arguments (the kernel starts workers; see gotrain kernel)")
	}
	spec := os.Getenv(worker.ClusterEnv)
	if spec == "mpi" && os.Getenv(worker.FDsEnv) == "" {
		// A rank mpirun started: the worker runs as its child, which
		// keeps its crash reports (worker.Supervise).
		return worker.Supervise()
	}
	rank, err := launcherRank(spec)
	if err != nil {
		return err
	}
	var cluster strategy.Cluster
	err = worker.Serve(worker.ServeConfig{
		Address:     worker.Address(*connect),
		Rank:        rank,
		MemoryLimit: *memLimit,
		NewExecutor: func() (kernel.Executor, error) {
			c, err := joinWorkers(spec)
			if err != nil {
				return nil, err
			}
			if c != nil {
				cluster = c
				strategy.UseCluster(c)
				// The workers run the same cell: an interrupt must stop
				// them all at the same Run, where they agree on it.
				safepoint.SetAgreed(true)
			}
			return session.New(session.Options{})
		},
	})
	if err != nil {
		return err
	}
	if w, ok := cluster.(*mpi.World); ok {
		// mpirun takes a rank that exits without MPI_Finalize for a crash
		// and ends the others; a rank whose peers are gone may never
		// return from it, so it gets a few seconds.
		done := make(chan struct{})
		go func() { w.Finalize(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	}
	// A goroutine a cell left running must not keep the process alive.
	os.Exit(0)
	return nil
}

// launcherRank is this worker's rank among those mpirun started (spec
// "mpi"), which it tells the kernel in its hello; 0 otherwise.
func launcherRank(spec string) (int, error) {
	if spec != "mpi" {
		return 0, nil
	}
	v := os.Getenv("OMPI_COMM_WORLD_RANK")
	rank, err := strconv.Atoi(v)
	if err != nil || rank < 0 {
		return 0, fmt.Errorf("gotrain worker: %s=mpi, but OMPI_COMM_WORLD_RANK=%q is not a rank: start it with mpirun (%%workers -np does)", worker.ClusterEnv, v)
	}
	return rank, nil
}

// joinWorkers joins the cluster of a worker's spec: "mpi", set by
// %workers -np for the ranks mpirun starts, or what joinCluster takes. An
// empty spec is a process of its own: no cluster.
func joinWorkers(spec string) (strategy.Cluster, error) {
	switch spec {
	case "":
		return nil, nil
	case "mpi":
		w, err := mpi.Init()
		if err != nil {
			return nil, fmt.Errorf("gotrain worker: joining the other ranks: %w", err)
		}
		return w, nil
	}
	return joinCluster(spec)
}

// leaveCluster ends this process's part in c: MPI is finalized, a
// loopback cluster closed.
func leaveCluster(c strategy.Cluster) {
	switch c := c.(type) {
	case *mpi.World:
		c.Finalize()
	case *loopback.Cluster:
		c.Close()
	}
}

// joinCluster joins the cluster spec describes (worker.ClusterEnv: "loopback
// RANK SIZE SOCKET", set by the kernel's %workers N and by bench --workers)
// with the token in worker.ClusterTokenEnv, which it removes from the
// environment. An empty spec is a process of its own: no cluster. It waits
// up to a minute for the other workers.
func joinCluster(spec string) (*loopback.Cluster, error) {
	if spec == "" {
		return nil, nil
	}
	var kind, sock string
	var rank, size int
	if _, err := fmt.Sscan(spec, &kind, &rank, &size, &sock); err != nil || kind != "loopback" {
		return nil, fmt.Errorf("gotrain worker: %s=%q: want \"loopback RANK SIZE SOCKET\" or \"mpi\"", worker.ClusterEnv, spec)
	}
	token, err := loopback.ParseToken(os.Getenv(worker.ClusterTokenEnv))
	os.Unsetenv(worker.ClusterTokenEnv)
	if err != nil {
		return nil, fmt.Errorf("gotrain: joining the other workers: %s: %w", worker.ClusterTokenEnv, err)
	}
	c, err := loopback.Join(sock, rank, size, token, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("gotrain: joining the other workers: %w", err)
	}
	return c, nil
}
