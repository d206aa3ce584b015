package worker

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// pipeSize is what the capture pipes are grown to. A fatal error makes the
// runtime write its traceback to fd 2 with the world stopped, so nothing
// drains the pipe meanwhile: a traceback larger than the pipe would block
// the dying process instead of letting it exit. 1 MiB is Linux's default
// pipe-max-size for unprivileged processes.
const pipeSize = 1 << 20

const fSetPipeSize = 1031 // F_SETPIPE_SZ

// capture turns file descriptors 1 and 2 into pipes that this process
// reads, so that everything written there (fmt, log, os.Stdout, C code
// through cgo, child processes, goroutines) reaches sink. It is safe for
// concurrent use.
type capture struct {
	fds  [2]int      // read ends for stdout and stderr; non-blocking
	keep [2]*os.File // the files behind fds when this process made the pipes, kept so no finalizer closes them
	diag *os.File    // the worker's diagnostics and crash output
	// errCopy gets fd 2's text as soon as it is read, or is -1; see FDsEnv.
	errCopy int
	sink    func(stream int, p []byte)
	mu      sync.Mutex // held while draining, so Flush and the reader take turns
	buf     []byte     // guarded by mu
}

// FDsEnv names the inherited file descriptors a worker captures, as
// "STDOUT_READ,STDERR_READ,DIAG,ERRCOPY". A kernel that starts a worker
// makes fds 1 and 2 pipes and passes their read ends. The runtime prints a
// fatal error's first line ("fatal error: stack overflow") to fd 2 alone,
// just before it stops every thread, so the kernel gets that text two ways:
// the worker copies each piece it reads from fd 2 to ERRCOPY at once, and
// the kernel keeps a copy of the stderr pipe's read end to read what the
// worker never got to. DIAG is where the worker's own diagnostics and crash
// output go. Without FDsEnv (a worker started by another launcher) the
// worker makes the pipes itself and its original stderr is DIAG.
const FDsEnv = "GOTRAIN_WORKER_FDS"

// startCapture takes over fds 1 and 2 and starts the goroutine that reads
// them. It returns the diagnostics file, which the caller uses for its own
// messages and crash output. sink is called with the capture's lock held
// and must not block on the capture.
func startCapture(sink func(stream int, p []byte)) (*capture, *os.File, error) {
	c := &capture{sink: sink, buf: make([]byte, 64<<10), errCopy: -1}
	if spec := os.Getenv(FDsEnv); spec != "" {
		os.Unsetenv(FDsEnv)
		var out, errR, diag, errCopy int
		if _, err := fmt.Sscanf(spec, "%d,%d,%d,%d", &out, &errR, &diag, &errCopy); err != nil {
			return nil, nil, fmt.Errorf("worker: capture: %s=%q: want four descriptors, as 3,4,5,6", FDsEnv, spec)
		}
		syscall.CloseOnExec(errCopy)
		c.errCopy = errCopy
		for i, fd := range []int{out, errR} {
			syscall.CloseOnExec(fd)
			if err := syscall.SetNonblock(fd, true); err != nil {
				return nil, nil, fmt.Errorf("worker: capture: fd %d: %w", fd, err)
			}
			c.fds[i] = fd
		}
		syscall.CloseOnExec(diag)
		c.diag = os.NewFile(uintptr(diag), "worker-diagnostics")
		go c.loop()
		return c, c.diag, nil
	}
	orig, err := dupCloexec(2)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: capture: keeping stderr: %w", err)
	}
	for i, target := range []int{1, 2} {
		r, w, err := capturePipe()
		if err != nil {
			return nil, nil, fmt.Errorf("worker: capture: pipe for fd %d: %w", target, err)
		}
		// Fd puts a file into blocking mode, every time it is called: take
		// it once, then make it non-blocking for good.
		fd := int(r.Fd())
		if err := syscall.SetNonblock(fd, true); err != nil {
			return nil, nil, fmt.Errorf("worker: capture: fd %d: %w", target, err)
		}
		// Dup3 without O_CLOEXEC: child processes (a `!cmd`) inherit the
		// pipes, so their output reaches the cell as well.
		if err := syscall.Dup3(int(w.Fd()), target, 0); err != nil {
			return nil, nil, fmt.Errorf("worker: capture: dup onto fd %d: %w", target, err)
		}
		w.Close()
		c.fds[i] = fd
		c.keep[i] = r
	}
	c.diag = os.NewFile(uintptr(orig), "worker-stderr")
	go c.loop()
	return c, c.diag, nil
}

// capturePipe makes a pipe for fd 1 or 2, grown to pipeSize.
func capturePipe() (r, w *os.File, err error) {
	if r, w, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	// Best effort: a smaller pipe only makes huge tracebacks riskier.
	_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSize, pipeSize)
	return r, w, nil
}

func dupCloexec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 3)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// loop waits for either pipe to have data and drains both. It runs for the
// life of the process: the pipes are never closed, since fds 1 and 2 stay
// open.
func (c *capture) loop() {
	fds := [2]pollFd{{fd: int32(c.fds[0]), events: pollIn}, {fd: int32(c.fds[1]), events: pollIn}}
	for {
		fds[0].revents, fds[1].revents = 0, 0
		_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 2, 0, 0, 0, 0)
		if errno != 0 && errno != syscall.EINTR {
			fmt.Fprintf(os.Stderr, "worker: capture stopped: ppoll: %v\n", errno)
			return
		}
		c.Flush()
	}
}

// Flush hands everything written to fds 1 and 2 so far to the sink. Bytes
// a write(2) finished putting into a pipe before Flush was called are
// delivered before it returns.
func (c *capture) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, fd := range c.fds {
		for {
			n, err := c.readLocked(i, fd)
			if n > 0 {
				c.sink(i, c.buf[:n])
			}
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n == 0 {
				break
			}
		}
	}
}

// readLocked reads what fd holds into c.buf. Text from fd 2 is first
// copied to errCopy with tee(2), which leaves it in the pipe, and only then
// read: the runtime stops every thread right after it prints a fatal
// error, and a thread stopped between taking text out of the pipe and
// copying it would lose the line that says what happened. Stopped between
// tee and read, the text is in both places, and the kernel drops the
// repeated lines.
func (c *capture) readLocked(i, fd int) (int, error) {
	if i != 1 || c.errCopy < 0 {
		return syscall.Read(fd, c.buf)
	}
	const spliceNonblock = 2 // SPLICE_F_NONBLOCK
	teed, err := syscall.Tee(fd, c.errCopy, len(c.buf), spliceNonblock)
	if teed > 0 {
		return syscall.Read(fd, c.buf[:teed])
	}
	if err == syscall.EINTR {
		return 0, err
	}
	// Empty, or the kernel is not keeping up with errCopy: read anyway,
	// uncopied, rather than hold the cell's output back.
	return syscall.Read(fd, c.buf)
}

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1
