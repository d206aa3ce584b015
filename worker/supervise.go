package worker

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// Supervise runs this worker command again as a child and keeps its pipes,
// as a kernel that starts a worker does (FDsEnv): for a worker another
// launcher starts (mpirun), so that a crash report reaches the launcher's
// stderr, which it relays to the kernel, whole. The runtime prints a fatal
// error's first line ("fatal error: stack overflow") to fd 2 alone, with
// the world stopped: a worker that captures its own fd 2 never reads it,
// and a keeper outliving the worker comes too late, since mpirun stops
// relaying a rank's output once the rank is gone. The supervisor writes the
// child's unread stderr and crash output, then ends as the child did (the
// same exit status, or the same signal), so the launcher reports the
// child's end.
//
// Supervise does not return when the child ran; it returns an error when
// the child could not start.
func Supervise() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("worker: supervise: finding this binary: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), FDsEnv+"=3,4,5,6")
	// The child goes with the supervisor, whichever signal ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd}
	diagDone, err := p.start()
	if err != nil {
		return fmt.Errorf("worker: supervise: starting the worker: %w", err)
	}
	// mpirun ends a job with SIGTERM (then SIGKILL): the worker gets it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	cmd.Wait()
	<-diagDone
	p.leftover()
	os.Stderr.Write(p.errText.bytes())
	os.Stderr.Write(p.diag.bytes())
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal.Reset()
		syscall.Kill(os.Getpid(), ws.Signal())
	}
	os.Exit(cmd.ProcessState.ExitCode())
	return nil
}
