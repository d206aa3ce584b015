package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/install"
	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
	"github.com/gotrain/gotrain/session/symbols"
	"github.com/traefik/yaegi/interp"
)

// runKernel serves one notebook session until the front end shuts it down.
// SIGINT interrupts the running cell, as interrupt_request does (a terminal
// may deliver Ctrl-C as a signal); SIGTERM drains and stops.
func runKernel(args []string, _, stderr io.Writer) error {
	if len(args) != 1 {
		return fmt.Errorf("gotrain kernel: want one connection file argument, got %d", len(args))
	}
	info, err := kernel.ReadConnectionFile(args[0])
	if err != nil {
		return err
	}
	// stdout belongs to the kernel's own diagnostics, never to cells: the
	// session captures what cells print and sends it to the notebook.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	// Cells import gotrain's own packages through generated symbol tables.
	sess, err := session.New(session.Options{Symbols: []interp.Exports{symbols.Symbols}, Docs: symbols.Docs})
	if err != nil {
		return err
	}
	defer sess.Close()

	k, err := kernel.New(kernel.Config{
		Connection:  info,
		Logger:      logger,
		HistoryFile: historyFile(logger),
		Version:     version,
	}, sess)
	if err != nil {
		return err
	}

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
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

// historyFile is where inputs are kept across kernel sessions, in the
// user's Jupyter data folder; empty (history in memory only) when it cannot
// be created.
func historyFile(logger *slog.Logger) string {
	data, err := install.UserDataDir()
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
