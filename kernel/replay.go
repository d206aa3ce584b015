package kernel

import (
	"sync"
	"time"
)

// defaultReplayWindow is how long a request's msg_id is remembered when
// Config.ReplayWindow is zero.
const defaultReplayWindow = 10 * time.Minute

// maxReplayIDs bounds the msg_ids a replayGuard remembers: past it, the
// oldest are forgotten before their window ends. At about 150 bytes an
// entry this is some 10 MB at most.
const maxReplayIDs = 1 << 16

// replayGuard remembers the session and msg_id of every verified message
// for a window of time, so that a copy of a validly signed message sent
// again (a replay) is dropped instead of served twice. Memory is bounded by
// maxReplayIDs. It is safe for concurrent use.
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

// first records m's id and reports whether it was not seen within the
// window before now.
func (g *replayGuard) first(m *message, now time.Time) bool {
	key := m.Header.Session + "\x00" + m.Header.MsgID
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

// expireLocked forgets the ids older than the window, and the oldest ids
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

// len returns how many ids the guard remembers.
func (g *replayGuard) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.mu.seen)
}
