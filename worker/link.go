package worker

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// kind says what a frame carries. Every frame is a 4-byte big-endian
// length (of kind and body), one kind byte, then the body: raw text for
// streams, JSON for everything else.
type kind byte

const (
	// worker to kernel
	kindHello    kind = 'H' // helloMsg: first, to start the handshake (auth.go)
	kindStdout   kind = 'o' // text a cell wrote to stdout
	kindStderr   kind = 'e' // text a cell wrote to stderr
	kindDisplay  kind = 'D' // displayMsg
	kindClear    kind = 'C' // clearMsg
	kindInputReq kind = 'I' // inputReq
	kindResult   kind = 'R' // resultMsg: the end of an execute
	kindReply    kind = 'Y' // replyMsg: complete, inspect, is_complete
	kindReady    kind = 'W' // the session is up and takes requests
	kindPong     kind = 'P' // the answer to a ping; no body

	// kernel to worker
	kindExecute    kind = 'x' // executeMsg
	kindRequest    kind = 'q' // requestMsg: complete, inspect, is_complete
	kindInputReply kind = 'i' // inputReply
	kindInterrupt  kind = '!' // no body
	kindShutdown   kind = 's' // no body
	kindPing       kind = 'p' // are you there; no body (attached workers)
)

// maxFrame bounds one frame so that a corrupt length cannot make a peer
// allocate without limit. A display bundle with a large image is the
// biggest thing a frame carries.
const maxFrame = 256 << 20

// errFrame wraps every error about a malformed frame.
var errFrame = errors.New("worker: malformed frame")

// helloMsg opens the handshake (auth.go). Nothing in it is secret.
type helloMsg struct {
	ID    string `json:"id"`    // which credential the worker holds
	Nonce []byte `json:"nonce"` // the worker's challenge to the kernel
	PID   int    `json:"pid"`
	// Rank is the worker's rank among the ranks one launcher started
	// (mpirun); the kernel gives all of them one credential.
	Rank int `json:"rank,omitempty"`
}

type displayMsg struct {
	Data     map[string]any `json:"data"`
	Metadata map[string]any `json:"metadata,omitempty"`
	ID       string         `json:"id,omitempty"`
	Update   bool           `json:"update,omitempty"`
}

type clearMsg struct {
	Wait bool `json:"wait"`
}

type inputReq struct {
	Prompt   string `json:"prompt"`
	Password bool   `json:"password,omitempty"`
}

type inputReply struct {
	Value string `json:"value"`
	Err   string `json:"err,omitempty"` // the front end could not answer
}

// executeMsg is a cell as the worker runs it: its magics parsed, in order,
// and its Go code with their lines blanked.
type executeMsg struct {
	Code           string  `json:"code"`
	Magics         []magic `json:"magics,omitempty"`
	Silent         bool    `json:"silent,omitempty"`
	StoreHistory   bool    `json:"store_history,omitempty"`
	AllowStdin     bool    `json:"allow_stdin,omitempty"`
	ExecutionCount int     `json:"execution_count"`
}

// execError mirrors kernel.ExecError on the wire.
type execError struct {
	Name      string   `json:"name"`
	Value     string   `json:"value"`
	Traceback []string `json:"traceback,omitempty"`
}

type resultMsg struct {
	Value map[string]any   `json:"value,omitempty"`
	Err   *execError       `json:"err,omitempty"`
	Pages []map[string]any `json:"pages,omitempty"`
}

// requestMsg is a complete, inspect or is_complete request; the reply
// carries the same ID.
type requestMsg struct {
	ID          uint64 `json:"id"`
	Op          string `json:"op"` // "complete", "inspect", "is_complete"
	Code        string `json:"code"`
	CursorPos   int    `json:"cursor_pos,omitempty"`
	DetailLevel int    `json:"detail_level,omitempty"`
}

type replyMsg struct {
	ID          uint64         `json:"id"`
	Matches     []string       `json:"matches,omitempty"`
	CursorStart int            `json:"cursor_start,omitempty"`
	CursorEnd   int            `json:"cursor_end,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Found       bool           `json:"found,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
	Status      string         `json:"status,omitempty"`
	Indent      string         `json:"indent,omitempty"`
}

// link is one end of a connection between the kernel and a worker. Reads
// happen on one goroutine; writes are serialized by a mutex and flushed
// frame by frame, except that writeBatch flushes once for many frames.
type link struct {
	c  net.Conn
	r  *bufio.Reader
	mu struct {
		sync.Mutex
		w   *bufio.Writer
		err error // the first write error; later writes return it
	}
}

func newLink(c net.Conn) *link {
	l := &link{c: c, r: bufio.NewReaderSize(c, 64<<10)}
	l.mu.w = bufio.NewWriterSize(c, 64<<10)
	return l
}

// frame is one decoded frame. body aliases nothing the link keeps.
type frame struct {
	kind kind
	body []byte
}

// read returns the next frame.
func (l *link) read() (frame, error) { return l.readMax(maxFrame) }

// readMax returns the next frame, which must be at most limit bytes long:
// a longer one is an error before anything is allocated for it.
func (l *link) readMax(limit uint32) (frame, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(l.r, hdr[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n < 1 || n > limit {
		return frame{}, fmt.Errorf("%w: length %d (want 1 to %d)", errFrame, n, limit)
	}
	body := make([]byte, n-1)
	if _, err := io.ReadFull(l.r, body); err != nil {
		return frame{}, fmt.Errorf("%w: body cut short: %v", errFrame, err)
	}
	return frame{kind: kind(hdr[4]), body: body}, nil
}

// writeLocked appends one frame to the buffer.
func (l *link) writeLocked(k kind, body []byte) {
	if l.mu.err != nil {
		return
	}
	if len(body)+1 > maxFrame {
		l.mu.err = fmt.Errorf("worker: frame of %d bytes exceeds the %d-byte limit", len(body)+1, maxFrame)
		return
	}
	var hdr [5]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(body)+1))
	hdr[4] = byte(k)
	if _, err := l.mu.w.Write(hdr[:]); err != nil {
		l.mu.err = err
		return
	}
	if _, err := l.mu.w.Write(body); err != nil {
		l.mu.err = err
	}
}

// send writes one frame and flushes it.
func (l *link) send(k kind, body []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeLocked(k, body)
	return l.flushLocked()
}

// sendJSON writes v as the body of one frame.
func (l *link) sendJSON(k kind, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("worker: encoding %c frame: %w", k, err)
	}
	return l.send(k, body)
}

func (l *link) flushLocked() error {
	if l.mu.err == nil {
		l.mu.err = l.mu.w.Flush()
	}
	return l.mu.err
}

func (l *link) close() error { return l.c.Close() }

// readJSON reads the next frame, which must be of kind k and at most limit
// bytes, into v.
func (l *link) readJSON(k kind, limit uint32, v any) error {
	f, err := l.readMax(limit)
	if err != nil {
		return err
	}
	if f.kind != k {
		return fmt.Errorf("%w: a %c frame, want %c", errFrame, f.kind, k)
	}
	return decode(f, v)
}

// decode unmarshals a frame's JSON body, naming the kind on failure.
func decode(f frame, v any) error {
	if err := json.Unmarshal(f.body, v); err != nil {
		return fmt.Errorf("%w: %c body: %v", errFrame, f.kind, err)
	}
	return nil
}

// Address is where a kernel listens for its workers: "unix:PATH" or
// "tcp:HOST:PORT". A worker may be given several, separated by commas, and
// connects to the first that answers: a kernel that listens on every
// interface does not know which of its addresses another host reaches.
type Address string

// dial connects to the first of a's addresses that accepts and proves it
// is the kernel (connectLink), trying each in turn, each connection for up
// to each: a peer that holds an address in the list but not the
// credential costs one try.
func (a Address) dial(each time.Duration, cred credential, rank int) (*link, error) {
	var errs []error
	list := strings.Split(string(a), ",")
	for _, one := range list {
		network, addr, err := Address(one).split()
		if err != nil {
			return nil, err
		}
		c, err := net.DialTimeout(network, addr, each)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		l, err := connectLink(c, network, cred, rank)
		if err == nil {
			return l, nil
		}
		c.Close()
		if len(list) > 1 {
			err = fmt.Errorf("%s: %w", one, err)
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// split returns the network and address net.Dial takes.
func (a Address) split() (network, addr string, err error) {
	network, addr, ok := strings.Cut(string(a), ":")
	if !ok || (network != "unix" && network != "tcp") || addr == "" {
		return "", "", fmt.Errorf("worker: address %q: want unix:PATH or tcp:HOST:PORT", string(a))
	}
	return network, addr, nil
}
