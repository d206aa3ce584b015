package strategy

// SetTestHookRun makes every replica call fn before running its program, so
// tests can fail one replica after tracing; restore undoes it.
func SetTestHookRun(fn func(replica int) error) (restore func()) {
	prev := testHookRun
	testHookRun = fn
	return func() { testHookRun = prev }
}

// SplitMin is the fewest elements of updates the replicas share.
const SplitMin = splitMin

// WithDeferProducts turns deferred products (graph.Program.Defer) on (the
// default) or off for the strategy's traces.
func WithDeferProducts(on bool) Option { return func(c *config) { c.noDefer = !on } }

// DeferredProducts counts, over the most recent trace's replicas, the parts
// of updates whose gradient product the replicas compute after the barrier.
func DeferredProducts(s *Mirrored) int {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if len(s.traces.entries) == 0 {
		return 0
	}
	count := 0
	for _, parts := range s.traces.entries[0].tr.plan.parts {
		for _, p := range parts {
			if p.prod != nil {
				count++
			}
		}
	}
	return count
}

// SplitUpdates counts the updates the replicas share (a Split) in the
// most recent trace.
func SplitUpdates(s *Mirrored) int {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if len(s.traces.entries) == 0 {
		return 0
	}
	return len(s.traces.entries[0].tr.plan.split)
}

// CheckNumerics runs the numerics check of the most recent trace over
// replica r's buffers, as a step does after the replica's program, and
// returns how many values it scanned.
func CheckNumerics(s *Mirrored, r int) (int, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	tr := s.traces.entries[0].tr
	n := 0
	for _, c := range tr.checks[r] {
		n += len(c.f32) + len(c.f64)
	}
	return n, tr.checkNumerics(r, nil)
}

var (
	NonFinite32 = nonFinite32
	NonFinite64 = nonFinite64
)

// WithoutNCCL makes GPU replicas on several devices sum their gradients
// through the host, in replica order, even where NCCL is available.
func WithoutNCCL() Option { return func(c *config) { c.noNCCL = true } }
