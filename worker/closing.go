package worker

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// shutdownGrace is how long a worker told to shut down lets its running
// cell reach a safe point before it closes its session and exits; the
// kernel waits stopGrace, longer, before it kills the worker, so that the
// session's folder is removed either way.
const (
	shutdownGrace = time.Second
	stopGrace     = 3 * time.Second
)

// closeOnSignal arranges for ex's Close, when ex is an io.Closer, to run
// once: when the returned stop is called, or on SIGTERM, SIGHUP or SIGINT,
// after which the process ends by that signal as it would have (mpirun
// ends its ranks with SIGTERM; Supervise passes it on). A session's Close
// removes its build folder, which holds the cells' source.
func closeOnSignal(ex kernel.Executor, log *slog.Logger) (stop func()) {
	c, ok := ex.(io.Closer)
	if !ok {
		return func() {}
	}
	var once sync.Once
	closeSession := func() {
		once.Do(func() {
			if err := c.Close(); err != nil {
				log.Warn("worker: closing the session", "err", err)
			}
		})
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			closeSession()
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		closeSession()
	}
}
