package display

import (
	"sync"
	"testing"
	"time"
)

// displayCall is one Sink.Display call seen by fakeSink.
type displayCall struct {
	b      Bundle
	id     string
	update bool
}

// fakeSink records what it is sent.
type fakeSink struct {
	mu     sync.Mutex
	calls  []displayCall
	clears []bool
}

func (s *fakeSink) Display(b Bundle, id string, update bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, displayCall{b, id, update})
}

func (s *fakeSink) Clear(wait bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clears = append(s.clears, wait)
}

func (s *fakeSink) snapshot() []displayCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]displayCall(nil), s.calls...)
}

// useFakeSink installs a fakeSink for the test and restores the previous
// sink afterwards. Tests that use it must not run in parallel.
func useFakeSink(t *testing.T) *fakeSink {
	t.Helper()
	s := &fakeSink{}
	prev := SetSink(s)
	t.Cleanup(func() { SetSink(prev) })
	return s
}

// fakeClock advances by tick on every call, from a fixed start.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	tick time.Duration
}

func newFakeClock(tick time.Duration) *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), tick: tick}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.tick)
	return c.t
}

// panics runs fn and returns what it panicked with, or nil.
func panics(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}
