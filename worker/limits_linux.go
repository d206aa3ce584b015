package worker

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// memLimit is the limit %limit last set, 0 for none; only for describeLimits.
var memLimit struct {
	sync.Mutex
	bytes int64
}

// setMemoryLimit bounds the worker's memory to n bytes (0 removes the
// bound) in two ways: the Go heap's soft limit (debug.SetMemoryLimit), so
// the collector works harder as the heap nears n, and an address-space
// limit of what the process has mapped now plus n, so that an allocation
// past it is refused (and the worker dies with "fatal error: out of
// memory", which the kernel reports) instead of the machine starting to
// swap. The address-space limit counts from what is mapped now because a
// Go process with OpenBLAS threads maps far more than it uses.
func setMemoryLimit(n int64) (string, error) {
	var as uint64 = math.MaxUint64 // RLIM_INFINITY
	if n > 0 {
		mapped, err := mappedBytes()
		if err != nil {
			return "", fmt.Errorf("worker: memory limit: %w", err)
		}
		as = uint64(mapped) + uint64(n)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return "", fmt.Errorf("worker: memory limit: reading RLIMIT_AS: %w", err)
	}
	if as > lim.Max {
		return "", fmt.Errorf("worker: memory limit %s is above the address-space limit this process was started with (%s)", formatSize(n), formatSize(int64(lim.Max)))
	}
	lim.Cur = as
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return "", fmt.Errorf("worker: memory limit: setting RLIMIT_AS: %w", err)
	}
	memLimit.Lock()
	memLimit.bytes = n
	memLimit.Unlock()
	if n == 0 {
		debug.SetMemoryLimit(math.MaxInt64)
		return "memory limit: off", nil
	}
	debug.SetMemoryLimit(n)
	return "memory limit: " + formatSize(n) + " (an allocation past it ends the worker with an out-of-memory error; the kernel stays)", nil
}

func describeLimits() string {
	memLimit.Lock()
	n := memLimit.bytes
	memLimit.Unlock()
	if n == 0 {
		return "memory limit: off (set one with %limit memory 8GiB)"
	}
	return "memory limit: " + formatSize(n)
}

// mappedBytes is the process's virtual size, VmSize in /proc/self/status.
func mappedBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading VmSize %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}

// cellTimer measures %time: wall time, and the CPU time of every thread
// of the worker.
type cellTimer struct {
	wall      time.Time
	user, sys time.Duration
}

func startTimer() *cellTimer {
	t := &cellTimer{wall: time.Now()}
	t.user, t.sys = cpuTimes()
	return t
}

func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// report is IPython's %time format.
func (t *cellTimer) report() string {
	wall := time.Since(t.wall)
	user, sys := cpuTimes()
	user, sys = user-t.user, sys-t.sys
	return fmt.Sprintf("CPU times: user %s, sys %s, total %s\nWall time: %s\n",
		roundDur(user), roundDur(sys), roundDur(user+sys), roundDur(wall))
}

func roundDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) + " µs"
	}
}
