package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
)

// What the benchmarks share: a CPU profile of gotrain's runs, and running
// the PyTorch twin of a model (scripts/torch_*.py) for its samples/s.

// startCPUProfile starts a CPU profile into path, for bench what; stop
// ends it. An empty path profiles nothing.
func startCPUProfile(what, path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("gotrain bench %s: %w", what, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("gotrain bench %s: %w", what, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// runTwin runs python script args and returns the samples/s of its report
// line, which rate's one group finds, and the line.
func runTwin(rateRE *regexp.Regexp, python, script string, args ...string) (rate float64, line string, err error) {
	var out, errOut bytes.Buffer
	cmd := exec.Command(python, append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return 0, "", fmt.Errorf("%s: %w\n%s", script, err, errOut.String())
	}
	line = string(bytes.TrimSpace(out.Bytes()))
	m := rateRE.FindStringSubmatch(line)
	if m == nil {
		return 0, "", fmt.Errorf("%s: want a report of samples/s, got %q", script, line)
	}
	rate, err = strconv.ParseFloat(m[1], 64)
	return rate, line, err
}

// median returns the median of xs (the mean of the middle two for an
// even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
