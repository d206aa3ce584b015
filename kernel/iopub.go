package kernel

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zeromq/zmq4"
)

// The iopub socket is an XPUB socket with a bounded queue per subscriber
// (third_party/zmq4/PATCHES.md): a client that reads iopub slowly, or not
// at all, loses some of its own output and never delays the others.
//
// What a slow subscriber may lose: the messages whose type is not in
// mustDeliver (stream, display_data, update_display_data, comm_msg) are
// dropped for it once its queue holds iopubQueue.Len messages or
// iopubQueue.Bytes bytes. The others use a reserve beyond those bounds;
// when even the reserve is full, the send waits up to iopubQueue.Wait and
// then disconnects that subscriber, whose client connects again and gets an
// iopub_welcome, rather than leave it silently without a status. Every
// drop is counted and logged.

// mustDeliver lists the iopub message types never dropped for a slow
// subscriber: what a client needs to follow a request to its end (status),
// to show how a cell ended (execute_input, execute_result, error), to keep
// its state in step (clear_output, comm_open, comm_close), and the
// protocol's own (iopub_welcome, shutdown_reply).
var mustDeliver = map[string]bool{
	"status":         true,
	"execute_input":  true,
	"execute_result": true,
	"error":          true,
	"clear_output":   true,
	"comm_open":      true,
	"comm_close":     true,
	"shutdown_reply": true,
	"iopub_welcome":  true,
}

// iopubQueue is the policy for each iopub subscriber's queue; OnDrop is set
// per kernel. A stream message of a printing loop is typically well under
// 1 KiB, so Len bounds a subscriber's queue long before Bytes does; Bytes
// and ReserveBytes bound it when large images are displayed. The kernel's
// memory for iopub is therefore at most about 20 MiB per subscriber, and
// the Go heap may reach twice what is live between collections.
var iopubQueue = zmq4.PubQueue{
	Len:          1000,
	Bytes:        16 << 20,
	Reserve:      1000,
	ReserveBytes: 4 << 20,
	Wait:         time.Second,
	// The last idle status should reach the clients before Close hangs up;
	// the wait ends as soon as the queues are empty.
	Linger: 500 * time.Millisecond,
}

// dropLogInterval is the least time between two log lines about dropped
// iopub messages: one never-reading client may lose thousands a second.
const dropLogInterval = time.Second

// iopubDrops counts the iopub messages dropped for slow subscribers and
// logs them, at most once per dropLogInterval. It is safe for concurrent
// use.
type iopubDrops struct {
	log          *slog.Logger // immutable
	dropped      atomic.Uint64
	disconnected atomic.Uint64

	mu struct {
		sync.Mutex
		last   time.Time // when the last line was logged
		logged uint64    // dropped as of that line
	}
}

// onDrop is the iopub socket's PubQueue.OnDrop.
func (d *iopubDrops) onDrop(x zmq4.Drop) {
	n := d.dropped.Add(1)
	if x.Disconnected {
		d.disconnected.Add(1)
		d.log.Warn("kernel: disconnected an iopub subscriber that took no messages for "+iopubQueue.Wait.String(),
			"peer", x.Peer, "queued", x.Queued)
	}
	d.mu.Lock()
	now := time.Now()
	if now.Sub(d.mu.last) < dropLogInterval {
		d.mu.Unlock()
		return
	}
	since := n - d.mu.logged
	d.mu.last, d.mu.logged = now, n
	d.mu.Unlock()
	d.log.Warn("kernel: dropped iopub messages for a subscriber that reads too slowly",
		"peer", x.Peer, "queued", x.Queued, "dropped", since, "dropped_total", n)
}

// welcome answers each new iopub subscription with an iopub_welcome
// (JEP 65), so a client knows its subscription has taken effect, followed
// by the last status the kernel published for a request, with that request
// as parent. Both go to the new subscriber alone: the iopub socket leaves
// a subscription unapplied until welcome applies it with these two as its
// first messages (zmq4.WithXPubManual), so the subscriber gets nothing
// before them and no one else gets them. welcome reads the XPUB socket's
// subscription messages until the kernel closes.
//
// The repeated status is for clients that do not wait for the welcome. A
// subscription takes effect some time after the client connects, and a
// request the client sent meanwhile on another socket may have been served
// already: its busy and idle went to the subscribers of that moment only.
// jupyter_server 1.23 guards its websockets against this by nudging the
// kernel with kernel_info_requests until iopub delivers, but skips the
// nudge when it believes the kernel busy, as it does when the busy of its
// own kernel_info_request has reached it and the idle not yet. JupyterLab
// 3.6 then waits for the idle of its first kernel_info_request, which
// never comes, and shows the kernel's status as unknown. The repeated
// status ends that wait. Since the subscription takes effect only here,
// the new subscriber cannot have seen that status already.
func (k *Kernel) welcome() {
	defer k.wg.Done()
	xpub := k.socks.iopub.sock.(zmq4.XPubManual)
	for {
		msg, ok := k.recv(k.socks.iopub)
		if !ok {
			return
		}
		if len(msg.Frames) != 1 || len(msg.Frames[0]) == 0 || msg.Frames[0][0] != 1 {
			continue // an unsubscription, or not a subscription at all
		}
		topic := string(msg.Frames[0][1:])
		// The welcome goes out on the kernel's usual topic when that
		// matches the subscription, otherwise on the subscription itself,
		// so that it reaches the new subscriber either way.
		ident := k.topic("iopub_welcome")
		if !strings.HasPrefix(ident, topic) {
			ident = topic
		}
		// Under last's lock, so that no status goes out between the
		// welcome and the repeat, and the repeat is the latest.
		k.last.Lock()
		first := []zmq4.Msg{k.iopubMsg([][]byte{[]byte(ident)}, nil, "iopub_welcome", welcomeContent{Subscription: topic})}
		if k.last.parent != nil && strings.HasPrefix(k.topic("status"), topic) {
			first = append(first, k.iopubMsg([][]byte{[]byte(k.topic("status"))}, k.last.parent, "status", statusContent{k.last.state}))
		}
		err := xpub.ApplySubscription(msg, first...)
		k.last.Unlock()
		if err != nil && !errors.Is(err, zmq4.ErrSubscriberGone) && k.ctx.Err() == nil {
			k.log.Warn("kernel: could not welcome an iopub subscriber", "subscription", topic, "err", err)
		}
	}
}

// iopubMsg encodes an iopub message, as publish would send it, for
// welcome to queue for one subscriber.
func (k *Kernel) iopubMsg(ids [][]byte, parent *message, msgType string, content any) zmq4.Msg {
	frames, _, err := k.encode(ids, parent, msgType, nil, content)
	if err != nil {
		// Only the kernel's own content types come here, and they encode.
		panic(fmt.Sprintf("kernel: could not encode %s: %v", msgType, err))
	}
	m := zmq4.NewMsgFrom(frames...)
	m.MustDeliver = true
	return m
}

type welcomeContent struct {
	Subscription string `json:"subscription"`
}
