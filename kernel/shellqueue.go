package kernel

import (
	"bytes"
	"sync"
)

// maxQueued bounds the shell requests read and not yet served. Past it
// the shell reader waits, and the sockets push back on the clients as they
// did before the queue (a ROUTER socket holds 1000 messages per peer).
const maxQueued = 4096

// shellQueue holds the shell requests the reader has taken off the socket
// and the shell worker has not yet served, in arrival order. Its push
// never waits while there is room, so the reader keeps reading while cells
// run and queue: that is what lets a new client's kernel_info_request be
// answered at once instead of behind a burst of cells (see queueShell). It
// counts the requests of each client queued or being served, to tell whose
// replies a request could overtake. A client is its
// shell socket's routing identity, not its session: the clients a
// jupyter_client KernelManager makes all share the manager's session.
type shellQueue struct {
	ready chan struct{} // holds a token while reqs is not empty
	slots chan struct{} // one token per queued request, at most maxQueued

	mu       sync.Mutex
	reqs     []pendingReq
	byClient map[string]int // a client's requests queued or being served, by routing identity
}

func newShellQueue() *shellQueue {
	return &shellQueue{
		ready:    make(chan struct{}, 1),
		slots:    make(chan struct{}, maxQueued),
		byClient: make(map[string]int),
	}
}

// push queues m, waiting for room while the queue is full; it reports
// false, queuing nothing, if stop or done closes first.
func (q *shellQueue) push(m *message, stop, done <-chan struct{}) bool {
	select {
	case q.slots <- struct{}{}:
	case <-stop:
		return false
	case <-done:
		return false
	}
	q.mu.Lock()
	q.reqs = append(q.reqs, pendingReq{msg: m})
	q.byClient[client(m)]++
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default: // already signalled
	}
	return true
}

// pop takes the oldest request, waiting for one; it reports false if stop
// or done closes first. The caller calls served once it has answered it.
func (q *shellQueue) pop(stop, done <-chan struct{}) (pendingReq, bool) {
	for {
		q.mu.Lock()
		if len(q.reqs) > 0 {
			p := q.reqs[0]
			q.reqs[0] = pendingReq{}
			q.reqs = q.reqs[1:]
			if len(q.reqs) > 0 {
				select {
				case q.ready <- struct{}{}:
				default:
				}
			}
			q.mu.Unlock()
			<-q.slots
			return p, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-stop:
			return pendingReq{}, false
		case <-done:
			return pendingReq{}, false
		}
	}
}

// served records that the request m, which pop gave, has been answered.
func (q *shellQueue) served(m *message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := client(m)
	if q.byClient[c]--; q.byClient[c] <= 0 {
		delete(q.byClient, c)
	}
}

// idle reports whether no request of m's client is queued or being served
// (mine), and whether no request at all is (all).
func (q *shellQueue) idle(m *message) (mine, all bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.byClient[client(m)] == 0, len(q.byClient) == 0
}

// client names the client that sent m: its routing identities, joined.
func client(m *message) string {
	if len(m.Identities) == 1 {
		return string(m.Identities[0])
	}
	return string(bytes.Join(m.Identities, []byte{0}))
}

// abortExecutes marks every execute_request queued now to be answered
// "aborted" (stop_on_error); requests read later run normally.
func (q *shellQueue) abortExecutes() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range q.reqs {
		if q.reqs[i].msg.Header.MsgType == "execute_request" {
			q.reqs[i].abort = true
		}
	}
}
