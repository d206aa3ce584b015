package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/internal/mpi"
	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/kernelspec"
	"github.com/gotrain/gotrain/worker"
)

// runKernel serves one notebook session until the front end shuts it down.
// The session itself lives in a worker process (gotrain worker), so that
// no cell can take the kernel down. SIGINT interrupts the running cell, as
// interrupt_request does (a terminal may deliver Ctrl-C as a signal);
// SIGTERM drains and stops. A kernel whose parent exits stops too, with its
// workers (see watchParent).
func runKernel(args []string, _, stderr io.Writer) error {
	// Before anything slow: a parent that exits while the kernel starts
	// must count as a change.
	parent := os.Getppid()
	fs := flag.NewFlagSet("gotrain kernel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	memLimit := fs.String("memory-limit", "", "the workers' memory limit, such as `8GiB` (default none); %limit changes it")
	workers := fs.Int("workers", 1, "run every cell on `N` worker processes of strategy.NewMultiWorkerMirrored (%workers changes it)")
	allowUnsigned := fs.Bool("allow-unsigned", false, "accept a connection file with an empty key on tcp: messages are then not authenticated, and anyone who can reach the ports can run code")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("gotrain kernel: want one connection file argument, got %d", fs.NArg())
	}
	info, err := kernel.ReadConnectionFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var limit int64
	if *memLimit != "" {
		if limit, err = worker.ParseSize(*memLimit); err != nil {
			return fmt.Errorf("gotrain kernel: --memory-limit: %w", err)
		}
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// The workers are this binary, and their cells are built on its runtime.
	logger.Info("gotrain: starting", "version", version, "runtime", cells.Runtime())
	notice := buildNotice()
	if notice != "" {
		logger.Warn("gotrain: " + notice)
	}
	if err := kernel.CheckConnectionFileMode(fs.Arg(0)); err != nil {
		logger.Warn("gotrain: " + err.Error())
	}

	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("gotrain kernel: cannot find this binary to start workers: %w", err)
	}
	if *workers < 1 {
		return fmt.Errorf("gotrain kernel: --workers: want N ≥ 1, got %d", *workers)
	}
	cfg := worker.Config{Command: []string{exe, "worker"}, MemoryLimit: limit, Logger: logger}
	if !mpi.Built {
		cfg.NoMPI = mpi.ErrNoMPI.Error()
	}
	sess, err := worker.NewGroup(cfg, *workers)
	if err != nil {
		return err
	}
	defer sess.Close()

	k, err := kernel.New(kernel.Config{
		Connection:    info,
		Logger:        logger,
		HistoryFile:   historyFile(logger),
		Version:       version,
		AllowUnsigned: *allowUnsigned,
		Notice:        notice,
	}, sess)
	if err != nil {
		return err
	}

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	done := make(chan struct{})
	defer close(done)
	orphaned := watchParent(logger, parent, done)
	go func() {
		for {
			select {
			case <-orphaned:
				orphaned = nil
				// Nobody is left to see a cell's end: stop now rather than
				// drain. If stopping the workers hangs, exiting still ends
				// them, as each sees its link close.
				time.AfterFunc(orphanExit, func() {
					logger.Error("gotrain: the workers did not stop in time after the kernel's parent exited; exiting")
					os.Exit(1)
				})
				k.Close()
			case sig := <-signals:
				if sig == syscall.SIGINT {
					sess.Interrupt()
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := k.Shutdown(ctx); err != nil {
					logger.Warn("gotrain: shutdown on SIGTERM", "err", err)
				}
				cancel()
			case <-done:
				return
			}
		}
	}()

	err = k.Run(context.Background())
	if errors.Is(err, kernel.ErrClosed) {
		return nil
	}
	return err
}

// parentPoll is how often a kernel checks that the process that started it
// still runs; orphanExit bounds how long it then takes to stop its workers
// before it exits regardless. Both keep a kernel whose front end died
// (a jupyter-console whose terminal was closed) from lingering more than
// 5 s.
const (
	parentPoll = 500 * time.Millisecond
	orphanExit = 4 * time.Second
)

// watchParent returns a channel that is closed when the kernel's parent,
// whose pid was parent when the kernel started, has exited: the parent pid
// changes (to 1, or to a subreaper). It polls every parentPoll until done
// is closed.
// jupyter_client starts a kernel directly and names itself in
// JPY_PARENT_PID; a kernelspec that starts the kernel through a launcher
// (a shell, conda run) makes the launcher the parent, and the launcher is
// watched then, since a pid that is not the parent cannot be watched
// without racing its reuse. A kernel started by init (the parent pid is
// already 1) has nothing to watch.
func watchParent(logger *slog.Logger, parent int, done <-chan struct{}) <-chan struct{} {
	if parent == 1 {
		logger.Info("gotrain: the kernel's parent is init; it runs until shut down")
		return nil
	}
	if v := os.Getenv("JPY_PARENT_PID"); v != "" && v != strconv.Itoa(parent) {
		logger.Info("gotrain: JPY_PARENT_PID is not the kernel's parent (a launcher is between them); watching the parent", "JPY_PARENT_PID", v, "parent", parent)
	}
	orphaned := make(chan struct{})
	go func() {
		tick := time.NewTicker(parentPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if os.Getppid() != parent {
				logger.Warn("gotrain: the kernel's parent exited; shutting down", "parent", parent)
				close(orphaned)
				return
			}
		}
	}()
	return orphaned
}

// historyFile is where inputs are kept across kernel sessions, in the
// user's Jupyter data folder; empty (history in memory only) when it cannot
// be created.
func historyFile(logger *slog.Logger) string {
	data, err := kernelspec.UserDataDir()
	if err != nil {
		logger.Warn("gotrain: history kept in memory only", "err", err)
		return ""
	}
	dir := filepath.Join(data, "gotrain")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		logger.Warn("gotrain: history kept in memory only", "err", err)
		return ""
	}
	return filepath.Join(dir, "history.jsonl")
}

// buildNotice says what this build lacks that a user would otherwise find
// out as slowness, or "" when it lacks nothing: the kernel logs it, ends its
// banner with it, and shows it under the session's first cell.
func buildNotice() string {
	if conv, oneDNN := graph.ConvBackend(); !oneDNN {
		return "float32 convolutions on the CPU run on " + conv + ", about 3x slower than through oneDNN"
	}
	return ""
}
