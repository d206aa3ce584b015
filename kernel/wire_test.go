package kernel_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/gotrain/gotrain/kernel"
	kt "github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

// TestIOPubWelcome checks that each new iopub subscriber gets an
// iopub_welcome (protocol 5.5, JEP 65) naming its subscription.
func TestIOPubWelcome(t *testing.T) {
	h := start(t, nil)
	for _, c := range []*kt.Client{h.c, dial(t, h)} {
		ms, err := c.WaitIOPub("", wait, func(ms []*kt.Msg) bool { return welcomes(ms) > 0 })
		if err != nil {
			t.Fatalf("%v\nkernel log:\n%s", err, h.log)
		}
		for _, m := range ms {
			if m.Type() == "iopub_welcome" && m.Content["subscription"] != "" {
				t.Errorf("iopub_welcome content %v, want subscription \"\"", m.Content)
			}
		}
	}
}

func welcomes(ms []*kt.Msg) int {
	n := 0
	for _, m := range ms {
		if m.Type() == "iopub_welcome" {
			n++
		}
	}
	return n
}

// TestIssue15LateSubscriber is JupyterLab's first kernel_info_request
// served before its iopub subscription reaches the kernel, as happens
// when jupyter_server 1.23 skips its nudge because it believes the kernel
// busy: the client gets its reply, and then, after its iopub_welcome, the
// idle status of that request, which it missed. Without it JupyterLab's
// kernel status stays "unknown".
func TestIssue15LateSubscriber(t *testing.T) {
	h := start(t, nil)
	late, err := kt.DialWithoutIOPub(endpoints(h.k.Connection()))
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	id, err := late.Send(kt.Shell, "kernel_info_request", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.ReplyTo(kt.Shell, id, wait); err != nil {
		t.Fatal(err)
	}
	// h's client, subscribed all along, sees the request end: its busy and
	// idle went out before the late client subscribed.
	if _, err := h.c.WaitIdle(id, wait); err != nil {
		t.Fatal(err)
	}
	if err := late.SubscribeIOPub(); err != nil {
		t.Fatal(err)
	}
	if _, err := late.WaitIOPub("", wait, func(ms []*kt.Msg) bool { return welcomes(ms) > 0 }); err != nil {
		t.Fatalf("%v\nkernel log:\n%s", err, h.log)
	}
	// A second request bounds the wait: what the kernel sends after the
	// welcome comes before this request's busy.
	next, err := late.Send(kt.Shell, "kernel_info_request", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := late.WaitIdle(next, wait); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range late.AllIOPub() {
		s := types([]*kt.Msg{m})
		switch m.Parent.MsgID {
		case id:
			s += "(first)"
		case next:
			s += "(next)"
		}
		got = append(got, s)
	}
	want := "iopub_welcome status:idle(first) status:busy(next) status:idle(next)"
	if strings.Join(got, " ") != want {
		t.Errorf("late subscriber's iopub = %s, want %s", strings.Join(got, " "), want)
	}
}

// dial connects a second, ready client to h's kernel.
func dial(t *testing.T, h *harness) *kt.Client {
	t.Helper()
	c, err := kt.Dial(endpoints(h.k.Connection()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Ready(wait); err != nil {
		t.Fatalf("%v\nkernel log:\n%s", err, h.log)
	}
	return c
}

// TestIssue15SlowSubscriber checks that an iopub subscriber that never
// reads does not stop a cell's output to other clients: the healthy
// client gets the cell's status, input and reply, and the kernel counts
// and logs what it dropped for the stuck one.
func TestIssue15SlowSubscriber(t *testing.T) {
	h := start(t, nil)
	stuck := zmq4.NewSub(context.Background())
	defer stuck.Close()
	if err := stuck.Dial("tcp://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(h.k.Connection().IOPubPort))); err != nil {
		t.Fatal(err)
	}
	if err := stuck.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	// The stuck subscriber's subscription has taken effect once its
	// iopub_welcome arrives; it reads nothing after that.
	welcomed := make(chan error, 1)
	go func() {
		m, err := stuck.Recv()
		if err == nil && !strings.Contains(string(m.Frames[0]), "iopub_welcome") {
			err = fmt.Errorf("stuck subscriber's first message on topic %q, want its iopub_welcome", m.Frames[0])
		}
		welcomed <- err
	}()
	select {
	case err := <-welcomed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatalf("no iopub_welcome for the stuck subscriber within %v", wait)
	}

	reply, io := h.requestWithin(kt.Shell, "execute_request", obj{"code": "flood"}, floodWait)
	if reply.Content["status"] != "ok" {
		t.Errorf("execute_reply %v", reply.Content)
	}
	got := types(io)
	if !strings.HasPrefix(got, "status:busy execute_input stream") || !strings.HasSuffix(got, "stream status:idle") {
		t.Errorf("healthy client's iopub = %.80s…%.40s, want busy, execute_input, streams, idle", got, got[max(0, len(got)-40):])
	}
	dropped, disconnected := kernel.IOPubDropped(h.k)
	if dropped == 0 || disconnected != 0 {
		t.Errorf("dropped %d, disconnected %d; want some dropped for the stuck subscriber, none disconnected", dropped, disconnected)
	}
	if !strings.Contains(h.log.String(), "dropped iopub messages for a subscriber that reads too slowly") {
		t.Errorf("kernel log lacks the drops:\n%s", h.log)
	}
	t.Logf("healthy client got %d of %d streams; %d dropped for the stuck one", strings.Count(got, "stream"), floodLines, dropped)
	if r, _ := h.request(kt.Shell, "kernel_info_request", nil); r.Type() != "kernel_info_reply" {
		t.Errorf("next reply %s", r.Type())
	}
}

// TestIssue15StalledHandshake holds TCP connections that never complete the
// ZMTP handshake open on every port, one silent and one that sent half a
// greeting, and checks that a new client still connects and is served.
func TestIssue15StalledHandshake(t *testing.T) {
	h := start(t, nil)
	ci := h.k.Connection()
	half := []byte{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f} // a greeting's signature only
	for _, port := range []int{ci.ShellPort, ci.ControlPort, ci.StdinPort, ci.IOPubPort, ci.HBPort} {
		for _, first := range [][]byte{nil, half} {
			c, err := net.Dial("tcp", net.JoinHostPort(ci.IP, strconv.Itoa(port)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(first); err != nil {
				t.Fatal(err)
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // let the kernel accept them first
	dialed := make(chan *kt.Client, 1)
	go func() {
		c, err := kt.Dial(endpoints(ci))
		if err != nil {
			t.Error(err)
		}
		dialed <- c
	}()
	var c *kt.Client
	select {
	case c = <-dialed:
		if c == nil {
			return
		}
		defer c.Close()
	case <-time.After(wait):
		t.Fatal("a new client could not connect while handshakes stalled on every port")
	}
	if err := c.Ready(wait); err != nil {
		t.Fatalf("%v\nkernel log:\n%s", err, h.log)
	}
	if r, err := c.Request(kt.Control, "kernel_info_request", nil, wait); err != nil || r.Type() != "kernel_info_reply" {
		t.Errorf("control: %v, %v", r, err)
	}
	if s, err := c.Ping("beat", wait); err != nil || s != "beat" {
		t.Errorf("heartbeat: %q, %v", s, err)
	}
}

// TestIssue15Replay sends validly signed requests twice: each is served
// once, and the copy is logged and dropped.
func TestIssue15Replay(t *testing.T) {
	h := start(t, nil)
	for _, tt := range []struct {
		ch      kt.Channel
		msgType string
		content obj
	}{
		{kt.Shell, "execute_request", obj{"code": "print"}},
		{kt.Control, "kernel_info_request", nil},
	} {
		t.Run(tt.ch.String(), func(t *testing.T) {
			frames, id, err := h.c.Encode(tt.msgType, nil, tt.content)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := h.c.SendFrames(tt.ch, frames); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.c.ReplyTo(tt.ch, id, wait); err != nil {
				t.Fatal(err)
			}
			// The next request is served, and nothing answered the copy.
			h.request(tt.ch, "kernel_info_request", nil)
			if m, err := h.c.Recv(tt.ch, quiet); err == nil {
				t.Errorf("got %s (parent %s) after a replayed message, want nothing", m.Type(), m.Parent.MsgID)
			}
			if !strings.Contains(h.log.String(), "dropped replayed message") || !strings.Contains(h.log.String(), id) {
				t.Errorf("log lacks the replay of %s:\n%s", id, h.log)
			}
		})
	}
	if got := len(h.exec.Requests()); got != 1 {
		t.Errorf("executor ran %d cells, want 1", got)
	}
}

// TestIssue15ClonedSession sends two different requests with the same
// session and msg_id, as jupyter_client's KernelManager and its client do
// (Session.clone restarts the counter): neither is taken for a replay.
func TestIssue15ClonedSession(t *testing.T) {
	h := start(t, nil)
	hdr := func(typ string) string {
		return `{"msg_id":"cloned_1","session":"s","username":"u","date":"2026-12-01T10:00:00.000000Z","msg_type":"` + typ + `","version":"5.5"}`
	}
	for _, typ := range []string{"kernel_info_request", "comm_info_request"} {
		if err := h.c.SendFrames(kt.Control, frames(t, nil, testKey, hdr(typ), "{}", "{}", "{}")); err != nil {
			t.Fatal(err)
		}
		m, err := h.c.ReplyTo(kt.Control, "cloned_1", wait)
		if err != nil {
			t.Fatalf("%s: %v\nkernel log:\n%s", typ, err, h.log)
		}
		if want := replyTypeOf(typ); m.Type() != want {
			t.Errorf("reply %s, want %s", m.Type(), want)
		}
	}
}

func replyTypeOf(req string) string { return strings.TrimSuffix(req, "_request") + "_reply" }

// TestReplayGuard checks the replay window and the bound on memory.
func TestReplayGuard(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	g := kernel.NewReplayGuard(time.Minute)
	steps := []struct {
		header string
		at     time.Duration
		want   bool
	}{
		{"a", 0, true},
		{"a", time.Second, false},
		{"b", 30 * time.Second, true},
		{"a", 59 * time.Second, false},
		{"a", 61 * time.Second, true}, // the window has passed
		{"b", 62 * time.Second, false},
	}
	for _, s := range steps {
		if got := g.First(s.header, t0.Add(s.at)); got != s.want {
			t.Errorf("First(%s) at +%v = %v, want %v", s.header, s.at, got, s.want)
		}
	}
	now := t0.Add(time.Hour)
	for i := range kernel.MaxReplayIDs + 1000 {
		g.First(strconv.Itoa(i), now)
	}
	if n := g.Len(); n > kernel.MaxReplayIDs {
		t.Errorf("guard holds %d headers, want ≤ %d", n, kernel.MaxReplayIDs)
	}
	if g.First(strconv.Itoa(kernel.MaxReplayIDs+999), now) {
		t.Error("the newest header was forgotten")
	}
}

// TestIssue24WelcomeToOneSubscriber checks that a new iopub subscriber's
// iopub_welcome and repeated status go to it alone: two clients that are
// already subscribed get no extra message when a third subscribes. Before,
// both went to every subscriber, and a client saw a second idle after its
// own request whenever another client subscribed meanwhile.
func TestIssue24WelcomeToOneSubscriber(t *testing.T) {
	h := start(t, nil)
	second := dial(t, h)
	reply, _ := h.request(kt.Shell, "execute_request", obj{"code": "1+1"})
	if reply.Content["status"] != "ok" {
		t.Fatalf("execute_reply %v", reply.Content)
	}
	if _, err := second.WaitIdle(reply.Parent.MsgID, wait); err != nil {
		t.Fatal(err)
	}
	before := []int{len(h.c.AllIOPub()), len(second.AllIOPub())}

	third := dial(t, h) // Ready: its welcome and a request of its own came through
	ms := third.AllIOPub()
	if len(ms) == 0 || ms[0].Type() != "iopub_welcome" {
		t.Fatalf("third client's first iopub message %v, want its iopub_welcome", types(ms))
	}
	if n := welcomes(ms); n != 1 {
		t.Errorf("third client got %d iopub_welcome, want 1", n)
	}
	// A request from the first client bounds the wait: whatever the third
	// client's subscription made the kernel send came before its busy.
	_, io := h.request(kt.Shell, "kernel_info_request", nil)
	if got := types(io); got != "status:busy status:idle" {
		t.Errorf("first client's iopub for its request = %s, want status:busy status:idle", got)
	}
	if _, err := second.WaitIdle(io[0].Parent.MsgID, wait); err != nil {
		t.Fatal(err)
	}
	for i, c := range []*kt.Client{h.c, second} {
		// What each of the first two saw after the third subscribed: the
		// third client's Ready requests and the first client's request,
		// busy and idle each, nothing else.
		for _, m := range c.AllIOPub()[before[i]:] {
			if m.Type() != "status" {
				t.Errorf("client %d got %s after another client subscribed, want statuses of requests only", i+1, m.Type())
			}
		}
		if extra := statusesWithoutRequest(c.AllIOPub()[before[i]:]); extra != "" {
			t.Errorf("client %d got unpaired statuses %s", i+1, extra)
		}
	}
}

// statusesWithoutRequest returns the statuses in ms whose request does not
// have exactly one busy and one idle among them, as "parent:state" words.
func statusesWithoutRequest(ms []*kt.Msg) string {
	count := map[string]map[any]int{}
	for _, m := range ms {
		if m.Type() != "status" {
			continue
		}
		if count[m.Parent.MsgID] == nil {
			count[m.Parent.MsgID] = map[any]int{}
		}
		count[m.Parent.MsgID][m.Content["execution_state"]]++
	}
	var bad []string
	for id, c := range count {
		if c["busy"] != 1 || c["idle"] != 1 || len(c) != 2 {
			bad = append(bad, fmt.Sprintf("%s:%v", id, c))
		}
	}
	return strings.Join(bad, " ")
}

// TestIssue31PeerLimits checks that each port hangs up on a peer that, after
// a well-formed handshake, announces a frame past the kernel's limits, and
// that the kernel goes on serving its client.
func TestIssue31PeerLimits(t *testing.T) {
	h := start(t, nil)
	ci := h.k.Connection()
	greeting := append([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0}, "NULL"...)
	greeting = append(greeting, make([]byte, 64-len(greeting))...)
	ready := func(sockType string) []byte {
		body := append([]byte{5}, "READY"...)
		body = append(body, 11)
		body = append(body, "Socket-Type"...)
		body = binary.BigEndian.AppendUint32(body, uint32(len(sockType)))
		body = append(body, sockType...)
		return append([]byte{0x4, byte(len(body))}, body...)
	}
	huge := []byte{0x2, 0, 0, 0x40, 0, 0, 0, 0, 0} // a frame of 2^46 bytes
	ports := []struct {
		name     string
		port     int
		sockType string
	}{
		{"shell", ci.ShellPort, "DEALER"}, {"control", ci.ControlPort, "DEALER"}, {"stdin", ci.StdinPort, "DEALER"},
		{"iopub", ci.IOPubPort, "SUB"}, {"heartbeat", ci.HBPort, "REQ"},
	}
	for _, p := range ports {
		t.Run(p.name, func(t *testing.T) {
			c, err := net.Dial("tcp", net.JoinHostPort(ci.IP, strconv.Itoa(p.port)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(append(append(greeting, ready(p.sockType)...), huge...)); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(wait))
			if _, err := io.Copy(io.Discard, c); err != nil {
				t.Fatalf("the kernel did not hang up on a frame of 2^46 bytes: %v", err)
			}
			if r, _ := h.request(kt.Shell, "kernel_info_request", nil); r.Type() != "kernel_info_reply" {
				t.Errorf("next reply %s", r.Type())
			}
		})
	}
}
