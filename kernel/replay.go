package kernel

import (
	"crypto/sha256"
	"sync"
	"time"
)

// defaultReplayWindow is how long a request's header is remembered when
// Config.ReplayWindow is zero.
const defaultReplayWindow = 10 * time.Minute

// maxReplayIDs bounds the headers a replayGuard remembers: past it, the
// oldest are forgotten before their window ends. At under 150 bytes an
// entry this is some 10 MB at most.
const maxReplayIDs = 1 << 16

// replayGuard remembers the header of every verified message for a window
// of time, so that a copy of a validly signed message sent again (a
// replay) is dropped instead of served twice. Memory is bounded by
// maxReplayIDs. It is safe for concurrent use.
//
// The whole header (msg_id, session, msg_type, date) is the key, not the
// msg_id alone: jupyter_client 7's KernelManager and the client it makes
// share a session id through Session.clone, which restarts the message
// counter, so the two send different messages with the same msg_id (the
// manager's interrupt_request and the client's first kernel_info_request,
// say). A replay copies the header exactly, since the header is signed.
type replayGuard struct {
	window time.Duration // immutable

	mu struct {
		sync.Mutex
		seen  map[string]struct{} // the keys in order[head:]
		order []replayEntry       // keys by arrival, oldest first, from head
		head  int
	}
}

type replayEntry struct {
	key  string
	seen time.Time
}

func newReplayGuard(window time.Duration) *replayGuard {
	if window <= 0 {
		window = defaultReplayWindow
	}
	g := &replayGuard{window: window}
	g.mu.seen = make(map[string]struct{})
	return g
}

// first records m's header and reports whether it was not seen within
// the window before now.
func (g *replayGuard) first(m *message, now time.Time) bool {
	sum := sha256.Sum256(m.rawHeader)
	key := string(sum[:])
	g.mu.Lock()
	defer g.mu.Unlock()
	g.expireLocked(now)
	if _, ok := g.mu.seen[key]; ok {
		return false
	}
	g.mu.seen[key] = struct{}{}
	g.mu.order = append(g.mu.order, replayEntry{key, now})
	return true
}

// expireLocked forgets the headers older than the window, and the oldest ids
// past maxReplayIDs.
func (g *replayGuard) expireLocked(now time.Time) {
	o := g.mu.order
	for g.mu.head < len(o) {
		e := o[g.mu.head]
		if now.Sub(e.seen) < g.window && len(o)-g.mu.head < maxReplayIDs {
			break
		}
		delete(g.mu.seen, e.key)
		o[g.mu.head] = replayEntry{}
		g.mu.head++
	}
	// Move the live entries down once the dead prefix is half the slice, so
	// the slice stays within twice the live count.
	if g.mu.head > 0 && g.mu.head >= len(o)/2 {
		n := copy(o, o[g.mu.head:])
		clear(o[n:])
		g.mu.order = o[:n]
		g.mu.head = 0
	}
}

// len returns how many headers the guard remembers.
func (g *replayGuard) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.mu.seen)
}
