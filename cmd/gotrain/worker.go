package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gotrain/gotrain/internal/loopback"
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
	err := worker.Serve(worker.ServeConfig{
		Address:     worker.Address(*connect),
		MemoryLimit: *memLimit,
		NewExecutor: func() (kernel.Executor, error) {
			c, err := joinCluster(os.Getenv(worker.ClusterEnv))
			if err != nil {
				return nil, err
			}
			if c != nil {
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
	// A goroutine a cell left running must not keep the process alive.
	os.Exit(0)
	return nil
}

// joinCluster joins the cluster spec describes (worker.ClusterEnv: "loopback
// RANK SIZE SOCKET", set by the kernel's %workers and by bench --workers).
// An empty spec is a process of its own: no cluster. It waits up to a
// minute for the other workers.
func joinCluster(spec string) (*loopback.Cluster, error) {
	if spec == "" {
		return nil, nil
	}
	var kind, sock string
	var rank, size int
	if _, err := fmt.Sscan(spec, &kind, &rank, &size, &sock); err != nil || kind != "loopback" {
		return nil, fmt.Errorf("gotrain worker: %s=%q: want \"loopback RANK SIZE SOCKET\"", worker.ClusterEnv, spec)
	}
	c, err := loopback.Join(sock, rank, size, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("gotrain: joining the other workers: %w", err)
	}
	return c, nil
}
