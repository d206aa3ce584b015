// Package safepoint carries the kernel's interrupt request down to the compiled
// libraries that user cells call, without those libraries importing the session.
//
// The session raises the flag when Jupyter asks for an interrupt. Long-running
// library calls (each strategy Run, each dataset step, each output write, each
// sleep) call Check or Sleep at points where stopping leaves no state half
// updated, and unwind the cell by panicking with ErrInterrupted. The session
// recovers that panic at the cell boundary and clears the flag before the next
// cell. A flag, not a context, because user code does not pass a context to
// the calls it makes (a loop calls s.Run(step, batch)), and closures made by
// earlier cells call the libraries too: a flag reaches every such call.
//
// All functions are safe for concurrent use.
package safepoint

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// ErrInterrupted is the value a safe point panics with when an interrupt is
// pending. Callers that must not panic use Err instead.
var ErrInterrupted = errors.New("interrupted")

var state struct {
	mu        sync.Mutex
	agreed    bool // SetAgreed: an interrupt waits for Confirm
	requested bool // Raise was called (and not cleared)
	raised    bool
	wake      chan struct{} // closed by Raise; replaced by Clear
	handled   int           // safe points that observed the flag since Raise
}

// pending mirrors state.raised without the lock, for Pending: compiled
// cells poll it at every loop iteration and function entry, where a mutex
// would cost more than the code it guards.
var pending atomic.Bool

func init() { state.wake = make(chan struct{}) }

// Pending reports whether an interrupt is raised, without taking the lock;
// it is small enough to be inlined at a compiled cell's safe points, which
// call Check only when it reports true.
func Pending() bool { return pending.Load() }

// SetAgreed makes interrupts wait for agreement (on) or fire at the next
// safe point (off, the default). A worker that is one of several runs the
// same cell as the others, and they must stop at the same point or the
// next collective mixes their steps: there, Raise only records the request
// (Requested), which the multi-worker strategy reads at each Run, shares
// with the other workers, and Confirms on every worker at once. Until then
// no safe point fires; a cell with no Run stops only at the second
// interrupt, which abandons it.
func SetAgreed(on bool) {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.agreed = on
}

// Requested reports whether an interrupt was asked for, confirmed or not.
func Requested() bool {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.requested
}

// Confirm makes a requested interrupt (or one another worker had) fire at
// every safe point from now on, as Raise does without SetAgreed.
func Confirm() {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.requested = true
	raiseLocked()
}

// Raise records an interrupt request and, unless interrupts wait for
// agreement (SetAgreed), wakes every Sleep in progress and makes every
// safe point fire.
func Raise() {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.requested = true
	if !state.agreed {
		raiseLocked()
	}
}

func raiseLocked() {
	if !state.raised {
		state.raised = true
		pending.Store(true)
		close(state.wake)
	}
}

// Clear withdraws a pending interrupt; the session calls it before each cell.
func Clear() {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.raised {
		state.raised = false
		pending.Store(false)
		state.wake = make(chan struct{})
	}
	state.requested = false
	state.handled = 0
}

// Raised reports whether an interrupt is pending.
func Raised() bool {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.raised
}

// Handled reports how many safe points have observed the pending interrupt.
// The session uses it to tell a cell that reached a safe point from one that
// never will (a tight loop), which only a second interrupt can stop.
func Handled() int {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.handled
}

// Err returns ErrInterrupted if an interrupt is pending, and nil otherwise.
func Err() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.raised {
		state.handled++
		return ErrInterrupted
	}
	return nil
}

// Check panics with ErrInterrupted if an interrupt is pending.
func Check() {
	if err := Err(); err != nil {
		panic(err)
	}
}

// Done returns a channel that is closed once an interrupt is raised.
func Done() <-chan struct{} {
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.wake
}

// Sleep pauses for d, returning early if an interrupt is raised, in which
// case it panics with ErrInterrupted. It is the time.Sleep that cells see.
func Sleep(d time.Duration) {
	Check()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-Done():
		Check()
	}
}
