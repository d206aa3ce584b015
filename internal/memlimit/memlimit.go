package memlimit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrMemory is the category of every error that refuses an allocation
// larger than the machine's memory. data.ErrMemory and graph.ErrMemory are
// this value, so errors.Is with either matches both.
var ErrMemory = errors.New("not enough memory")

// cgroupFiles are the cgroup v2 and v1 limits of this process's group.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// bytes is Bytes's value, read once.
var bytes = sync.OnceValue(func() uint64 {
	meminfo, _ := os.ReadFile("/proc/meminfo")
	var cgroups []string
	for _, path := range cgroupFiles {
		if b, err := os.ReadFile(path); err == nil {
			cgroups = append(cgroups, string(b))
		}
	}
	return parse(string(meminfo), cgroups)
})

// Bytes returns the memory this process may use in bytes: the smaller of
// the machine's RAM (MemTotal in /proc/meminfo) and its cgroup's limit, or
// 0 when neither can be read.
func Bytes() uint64 { return bytes() }

// parse is Bytes's computation on the text of /proc/meminfo and of the
// cgroup limit files that exist ("max" when a group has no limit).
func parse(meminfo string, cgroups []string) uint64 {
	var limit uint64
	for _, line := range strings.Split(meminfo, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				limit = kb << 10
			}
		}
	}
	for _, c := range cgroups {
		if v, err := strconv.ParseUint(strings.TrimSpace(c), 10, 64); err == nil && v > 0 && (limit == 0 || v < limit) {
			limit = v
		}
	}
	return limit
}

// Size returns the bytes of a buffer of the given shape with bytesPerValue
// bytes a value, as a float64 so that no product of dimensions overflows.
// Negative dimensions count as 0.
func Size(shape []int, bytesPerValue int) float64 {
	need := float64(bytesPerValue)
	for _, d := range shape {
		need *= float64(max(d, 0))
	}
	return need
}

// Fits reports whether need bytes fit in Bytes; it reports true when
// Bytes is 0 (the memory cannot be read, so nothing is checked).
func Fits(need float64) bool {
	limit := Bytes()
	return limit == 0 || need <= float64(limit)
}

// Shortfall says why need bytes do not fit, for an error that wraps
// ErrMemory: "needs 8 TiB, more than this machine's 15.6 GiB".
func Shortfall(need float64) string {
	return fmt.Sprintf("needs %s, more than this machine's %s", Format(need), Format(float64(Bytes())))
}

// Format writes a size in bytes in binary units, e.g. "8 TiB", "15.6 GiB".
func Format(b float64) string {
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
