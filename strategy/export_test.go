package strategy

import "io"

// SetTestHookRun makes every replica call fn before running its program, so
// tests can fail one replica after tracing; restore undoes it.
func SetTestHookRun(fn func(replica int) error) (restore func()) {
	prev := testHookRun
	testHookRun = fn
	return func() { testHookRun = prev }
}

// SetWarnOutput redirects Run's warnings; restore undoes it.
func SetWarnOutput(w io.Writer) (restore func()) {
	prev := warnOutput
	warnOutput = w
	return func() { warnOutput = prev }
}

// SplitMin is the fewest elements of updates the replicas share.
const SplitMin = splitMin
