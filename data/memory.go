package data

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrMemory is wrapped by the panics of functions asked for more memory
// than the machine has: the runtime would otherwise end the process with
// "fatal error: out of memory", which no recover catches, and a notebook
// would lose its session.
var ErrMemory = errors.New("data: not enough memory")

// machineMemory is the memory this process may use in bytes: the smaller of
// the machine's RAM (/proc/meminfo) and its cgroup's limit, or 0 when
// neither can be read (then nothing is checked).
var machineMemory = sync.OnceValue(func() uint64 {
	var limit uint64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					limit = kb << 10
				}
			}
		}
	}
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(path); err == nil {
			if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (limit == 0 || v < limit) {
				limit = v
			}
		}
	}
	return limit
})

// CheckAlloc returns an error wrapping ErrMemory, naming what and its shape,
// when a buffer of that shape with bytesPerValue bytes a value would not fit
// in the machine's memory; otherwise (or when the memory cannot be read)
// nil. Tensors, datasets and layers call it before they allocate, so that a
// shape that is too large is an error rather than the end of the process.
func CheckAlloc(what string, shape []int, bytesPerValue int) error {
	mem := machineMemory()
	if mem == 0 {
		return nil
	}
	need := float64(bytesPerValue)
	for _, d := range shape {
		need *= float64(max(d, 0))
	}
	if need <= float64(mem) {
		return nil
	}
	return fmt.Errorf("%w: %s: shape %v needs %s, more than this machine's %s", ErrMemory, what, shape, bytesString(need), bytesString(float64(mem)))
}

// bytesString writes a size in binary units, e.g. "8 TiB", "15.6 GiB".
func bytesString(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b == math.Trunc(b) {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
