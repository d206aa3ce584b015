// Per-subscriber queues of PUB and XPUB sockets (gotrain, see PATCHES.md).

package zmq4

import (
	"net"
	"time"
)

// PubQueue bounds what a PUB or XPUB socket keeps queued for each of its
// subscribers, and says what happens to a message that does not fit.
//
// A subscriber's queue takes an ordinary message while it holds fewer than
// Len messages and the message fits within Bytes; otherwise the message is
// dropped for that subscriber alone, and OnDrop is told. A message with
// MustDeliver set may also use a reserve of Reserve more messages and
// ReserveBytes more bytes. When even the reserve is full, Send waits up to
// Wait for the subscriber to take messages off its queue; a subscriber that
// has not made room by then is disconnected (it may connect again), and
// OnDrop is told with Disconnected set. A message always fits an empty
// queue, whatever its size.
//
// The sizes count frame bytes. A zero field takes its default.
type PubQueue struct {
	Len          int           // default 1000 messages, as libzmq's SNDHWM
	Bytes        int           // default 64 MiB
	Reserve      int           // default 1000 messages
	ReserveBytes int           // default 16 MiB
	Wait         time.Duration // default 1 second

	// Linger is how long Close waits for the queues to drain before it
	// closes the connections. Zero means Close does not wait.
	Linger time.Duration

	// OnDrop, when set, is called for each message dropped for one
	// subscriber, on the goroutine that sent it. It must return quickly
	// and must not use the socket.
	OnDrop func(Drop)
}

// Drop describes a message a PUB or XPUB socket did not deliver to one
// subscriber.
type Drop struct {
	Peer         net.Addr // the subscriber's address
	Queued       int      // messages in its queue when the message was dropped
	MustDeliver  bool     // the message had MustDeliver set
	Disconnected bool     // the subscriber was disconnected for want of room
}

// WithPubQueue configures the per-subscriber queues of a PUB or XPUB
// socket. Other sockets ignore it.
func WithPubQueue(q PubQueue) Option {
	return func(s *socket) {
		s.pubq = q
	}
}

func (q PubQueue) withDefaults() PubQueue {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&q.Len, 1000)
	def(&q.Bytes, 64<<20)
	def(&q.Reserve, 1000)
	def(&q.ReserveBytes, 16<<20)
	if q.Wait <= 0 {
		q.Wait = time.Second
	}
	return q
}

// dropped tells OnDrop that msg was not delivered to s.
func (q *PubQueue) dropped(s *pubSub, msg Msg, disconnected bool) {
	if q.OnDrop == nil {
		return
	}
	q.OnDrop(Drop{
		Peer:         s.conn.rw.RemoteAddr(),
		Queued:       s.queued(),
		MustDeliver:  msg.MustDeliver,
		Disconnected: disconnected,
	})
}
