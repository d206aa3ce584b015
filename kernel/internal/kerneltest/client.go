// Package kerneltest is a Jupyter client for testing the kernel package
// over real ZeroMQ sockets: it connects DEALER sockets to shell, control
// and stdin, a SUB socket to iopub and a REQ socket to heartbeat, signs
// what it sends and collects iopub messages by parent msg_id.
//
// Its framing and signing are written independently of package kernel, so
// the tests check the kernel against a second implementation of the wire
// format rather than against itself.
package kerneltest

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Channel names a client socket.
type Channel int

// The channels a client sends on or receives from.
const (
	Shell Channel = iota
	Control
	Stdin
	numReplyChannels
)

func (c Channel) String() string {
	switch c {
	case Shell:
		return "shell"
	case Control:
		return "control"
	case Stdin:
		return "stdin"
	}
	return "channel(" + strconv.Itoa(int(c)) + ")"
}

// Header is a message header.
type Header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// Msg is a received message with its content decoded as a JSON object.
type Msg struct {
	Header   Header
	Parent   Header
	Metadata map[string]any
	Content  map[string]any
}

// Type is the message's msg_type.
func (m *Msg) Type() string { return m.Header.MsgType }

// Endpoints says where the kernel listens and with which key it signs.
type Endpoints struct {
	IP                                                   string
	ShellPort, ControlPort, StdinPort, IOPubPort, HBPort int
	Key                                                  string
}

// Client is a test client. Its methods are safe for concurrent use.
type Client struct {
	key     []byte
	session string
	socks   [numReplyChannels]zmq4.Socket
	iopubEP string
	iopubMu sync.Mutex  // guards iopub, set once by SubscribeIOPub
	iopub   zmq4.Socket // nil until SubscribeIOPub
	hb      zmq4.Socket
	replies [numReplyChannels]chan *Msg
	wg      sync.WaitGroup
	done    chan struct{} // closed by Close; readers stop delivering
	closing sync.Once
	hbMu    sync.Mutex

	mu struct {
		sync.Mutex
		byParent map[string][]*Msg // iopub messages by parent msg_id
		all      []*Msg            // every iopub message, in order
		changed  chan struct{}     // closed and replaced on each iopub message
		errs     []error           // frames the client could not decode
	}
}

// Sign returns the hex HMAC-SHA256 of the four frames under key, or "" for
// an empty key.
func Sign(key []byte, header, parent, metadata, content []byte) string {
	if len(key) == 0 {
		return ""
	}
	mac := hmac.New(sha256.New, key)
	for _, part := range [][]byte{header, parent, metadata, content} {
		mac.Write(part)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// Dial connects to the kernel at e. It does not wait for the iopub
// subscription to take effect; see Ready.
func Dial(e Endpoints) (*Client, error) {
	c, err := DialWithoutIOPub(e)
	if err != nil {
		return nil, err
	}
	if err := c.SubscribeIOPub(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// DialWithoutIOPub connects to the kernel at e as Dial does, but leaves
// iopub for SubscribeIOPub, so a test can have the kernel serve a request
// before the client's subscription reaches it (a late joiner).
func DialWithoutIOPub(e Endpoints) (*Client, error) {
	c := &Client{key: []byte(e.Key), session: newID(), done: make(chan struct{})}
	c.mu.byParent = map[string][]*Msg{}
	c.mu.changed = make(chan struct{})
	id := zmq4.WithID(zmq4.SocketIdentity(c.session))
	ep := func(port int) string { return "tcp://" + net.JoinHostPort(e.IP, strconv.Itoa(port)) }
	c.iopubEP = ep(e.IOPubPort)
	ports := [numReplyChannels]int{e.ShellPort, e.ControlPort, e.StdinPort}
	var opened []zmq4.Socket
	fail := func(err error) (*Client, error) {
		for _, s := range opened {
			s.Close()
		}
		return nil, err
	}
	for ch := Shell; ch < numReplyChannels; ch++ {
		s := zmq4.NewDealer(nil, id, zmq4.WithDialerRetry(20*time.Millisecond))
		opened = append(opened, s)
		if err := s.Dial(ep(ports[ch])); err != nil {
			return fail(fmt.Errorf("kerneltest: dial %s: %w", ch, err))
		}
		c.socks[ch] = s
		c.replies[ch] = make(chan *Msg, 256)
	}
	c.hb = zmq4.NewReq(nil, zmq4.WithDialerRetry(20*time.Millisecond))
	opened = append(opened, c.hb)
	if err := c.hb.Dial(ep(e.HBPort)); err != nil {
		return fail(fmt.Errorf("kerneltest: dial heartbeat: %w", err))
	}
	for ch := Shell; ch < numReplyChannels; ch++ {
		c.wg.Add(1)
		go c.readReplies(ch)
	}
	return c, nil
}

// SubscribeIOPub connects the client's SUB socket to iopub, subscribes to
// everything and starts collecting; Dial has already called it. It does
// not wait for the subscription to take effect: the kernel's
// iopub_welcome says when it has.
func (c *Client) SubscribeIOPub() error {
	c.iopubMu.Lock()
	defer c.iopubMu.Unlock()
	if c.iopub != nil {
		return errors.New("kerneltest: iopub already subscribed")
	}
	s := zmq4.NewSub(nil, zmq4.WithDialerRetry(20*time.Millisecond))
	if err := s.Dial(c.iopubEP); err != nil {
		s.Close()
		return fmt.Errorf("kerneltest: dial iopub: %w", err)
	}
	if err := s.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		s.Close()
		return fmt.Errorf("kerneltest: subscribe: %w", err)
	}
	c.iopub = s
	c.wg.Add(1)
	go c.readIOPub(s)
	return nil
}

// Close closes the sockets and waits for the client's goroutines. Closing
// twice is a no-op.
func (c *Client) Close() error {
	var first error
	c.closing.Do(func() {
		close(c.done)
		c.iopubMu.Lock()
		socks := append(c.socks[:], c.hb)
		if c.iopub != nil {
			socks = append(socks, c.iopub)
		}
		c.iopubMu.Unlock()
		for _, s := range socks {
			if err := s.Close(); err != nil && first == nil {
				first = err
			}
		}
	})
	c.wg.Wait()
	return first
}

// Session is the session id the client puts in its headers; it is also the
// ZeroMQ identity of its shell, control and stdin sockets.
func (c *Client) Session() string { return c.session }

// Encode returns the frames of a signed request, without identities.
func (c *Client) Encode(msgType string, parent *Header, content any) (frames [][]byte, msgID string, err error) {
	h := Header{
		MsgID:    newID(),
		Session:  c.session,
		Username: "test",
		Date:     time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
		MsgType:  msgType,
		Version:  "5.5",
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, "", err
	}
	pb := []byte("{}")
	if parent != nil {
		if pb, err = json.Marshal(parent); err != nil {
			return nil, "", err
		}
	}
	cb, err := json.Marshal(content)
	if err != nil {
		return nil, "", err
	}
	if string(cb) == "null" {
		cb = []byte("{}")
	}
	md := []byte("{}")
	return [][]byte{[]byte("<IDS|MSG>"), []byte(Sign(c.key, hb, pb, md, cb)), hb, pb, md, cb}, h.MsgID, nil
}

// Send signs and sends a message on ch and returns its msg_id.
func (c *Client) Send(ch Channel, msgType string, content any) (string, error) {
	return c.SendReply(ch, msgType, nil, content)
}

// SendReply is Send with a parent header, as an input_reply needs.
func (c *Client) SendReply(ch Channel, msgType string, parent *Header, content any) (string, error) {
	frames, id, err := c.Encode(msgType, parent, content)
	if err != nil {
		return "", err
	}
	return id, c.SendFrames(ch, frames)
}

// SendFrames sends frames as they are, for malformed and forged messages.
func (c *Client) SendFrames(ch Channel, frames [][]byte) error {
	return c.socks[ch].SendMulti(zmq4.NewMsgFrom(frames...))
}

// Recv returns the next message on ch, or an error after timeout.
func (c *Client) Recv(ch Channel, timeout time.Duration) (*Msg, error) {
	select {
	case m := <-c.replies[ch]:
		return m, nil
	case <-time.After(timeout):
		return nil, fmt.Errorf("kerneltest: no message on %s after %v", ch, timeout)
	}
}

// ReplyTo returns the next message on ch whose parent is msgID, skipping
// others (such as replies to earlier probes).
func (c *Client) ReplyTo(ch Channel, msgID string, timeout time.Duration) (*Msg, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.Recv(ch, time.Until(deadline))
		if err != nil {
			return nil, fmt.Errorf("kerneltest: no reply to %s: %w", msgID, err)
		}
		if m.Parent.MsgID == msgID {
			return m, nil
		}
	}
}

// Request sends a request on ch and waits for its reply.
func (c *Client) Request(ch Channel, msgType string, content any, timeout time.Duration) (*Msg, error) {
	id, err := c.Send(ch, msgType, content)
	if err != nil {
		return nil, err
	}
	return c.ReplyTo(ch, id, timeout)
}

// Ready waits until the kernel answers kernel_info and the iopub
// subscription delivers, by probing with kernel_info_request: a PUB socket
// drops messages until the subscription reaches it.
func (c *Client) Ready(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		id, err := c.Send(Shell, "kernel_info_request", nil)
		if err != nil {
			return err
		}
		if _, err := c.WaitIdle(id, 200*time.Millisecond); err == nil {
			return nil
		}
	}
	return fmt.Errorf("kerneltest: kernel not ready after %v", timeout)
}

// IOPub returns the iopub messages received so far whose parent is msgID.
func (c *Client) IOPub(msgID string) []*Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Msg(nil), c.mu.byParent[msgID]...)
}

// AllIOPub returns every iopub message received so far.
func (c *Client) AllIOPub() []*Msg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Msg(nil), c.mu.all...)
}

// WaitIOPub waits until done reports true for the iopub messages of
// parent msgID, and returns them.
func (c *Client) WaitIOPub(msgID string, timeout time.Duration, done func([]*Msg) bool) ([]*Msg, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		msgs := append([]*Msg(nil), c.mu.byParent[msgID]...)
		changed := c.mu.changed
		c.mu.Unlock()
		if done(msgs) {
			return msgs, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return msgs, fmt.Errorf("kerneltest: iopub for %s incomplete after %v (got %d messages)", msgID, timeout, len(msgs))
		}
	}
}

// WaitIdle waits for the status idle that ends the request msgID and
// returns the request's iopub messages.
func (c *Client) WaitIdle(msgID string, timeout time.Duration) ([]*Msg, error) {
	return c.WaitIOPub(msgID, timeout, func(ms []*Msg) bool {
		for _, m := range ms {
			if m.Type() == "status" && m.Content["execution_state"] == "idle" {
				return true
			}
		}
		return false
	})
}

// DecodeErrors returns what the client could not decode; a correct kernel
// sends nothing that lands here.
func (c *Client) DecodeErrors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.mu.errs...)
}

// Ping sends a heartbeat and waits for its echo.
func (c *Client) Ping(payload string, timeout time.Duration) (string, error) {
	c.hbMu.Lock()
	defer c.hbMu.Unlock()
	if err := c.hb.Send(zmq4.NewMsgString(payload)); err != nil {
		return "", err
	}
	got := make(chan string, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		m, err := c.hb.Recv()
		if err == nil && len(m.Frames) > 0 {
			got <- string(m.Frames[0])
		}
	}()
	select {
	case s := <-got:
		return s, nil
	case <-time.After(timeout):
		return "", errors.New("kerneltest: no heartbeat echo")
	}
}

func (c *Client) readReplies(ch Channel) {
	defer c.wg.Done()
	for {
		raw, err := c.socks[ch].Recv()
		if err != nil {
			return
		}
		m, err := c.decode(raw.Frames)
		if err != nil {
			c.recordErr(fmt.Errorf("%s: %w", ch, err))
			continue
		}
		select {
		case c.replies[ch] <- m:
		case <-c.done:
			return
		}
	}
}

func (c *Client) readIOPub(iopub zmq4.Socket) {
	defer c.wg.Done()
	for {
		raw, err := iopub.Recv()
		if err != nil {
			return
		}
		m, err := c.decode(raw.Frames)
		if err != nil {
			c.recordErr(fmt.Errorf("iopub: %w", err))
			continue
		}
		c.mu.Lock()
		c.mu.all = append(c.mu.all, m)
		c.mu.byParent[m.Parent.MsgID] = append(c.mu.byParent[m.Parent.MsgID], m)
		close(c.mu.changed)
		c.mu.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

func (c *Client) recordErr(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.errs = append(c.mu.errs, err)
}

// decode parses frames and checks the kernel's signature.
func (c *Client) decode(frames [][]byte) (*Msg, error) {
	i := 0
	for i < len(frames) && string(frames[i]) != "<IDS|MSG>" {
		i++
	}
	if len(frames)-i < 6 {
		return nil, fmt.Errorf("got %d frames, want delimiter and 5 more", len(frames))
	}
	f := frames[i+1:]
	if want := Sign(c.key, f[1], f[2], f[3], f[4]); string(f[0]) != want {
		return nil, fmt.Errorf("bad signature %q, want %q", f[0], want)
	}
	m := &Msg{}
	for _, part := range []struct {
		b []byte
		v any
	}{{f[1], &m.Header}, {f[2], &m.Parent}, {f[3], &m.Metadata}, {f[4], &m.Content}} {
		if err := json.Unmarshal(part.b, part.v); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
