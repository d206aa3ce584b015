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

// SetDeferProducts turns deferred products (graph.Program.Defer) on or off
// for later traces; restore undoes it.
func SetDeferProducts(on bool) (restore func()) {
	prev := deferProducts
	deferProducts = on
	return func() { deferProducts = prev }
}

// DeferredProducts counts, over the most recent trace's replicas, the parts
// of updates whose gradient product the replicas compute after the barrier.
func DeferredProducts(s *Mirrored) int {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if len(s.traces.entries) == 0 {
		return 0
	}
	count := 0
	for _, parts := range s.traces.entries[0].tr.split.parts {
		for _, p := range parts {
			if p.prod != nil {
				count++
			}
		}
	}
	return count
}
