package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
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
