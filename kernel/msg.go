package kernel

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrProtocol is the category of every error about a malformed or forged
// message: missing delimiter, too few frames, bad signature, bad JSON. The
// kernel logs such a message, drops it and keeps serving.
var ErrProtocol = errors.New("kernel: protocol error")

// protocolVersion is the Jupyter messaging protocol version this package
// speaks; it goes into every header and into kernel_info_reply.
const protocolVersion = "5.5"

// delimiter separates the routing identities from the signed message.
var delimiter = []byte("<IDS|MSG>")

// emptyObject is the encoding of an empty parent header, metadata or content.
var emptyObject = []byte("{}")

// header is a message header. The same shape is used for parent_header.
type header struct {
	MsgID    string `json:"msg_id"`
	Session  string `json:"session"`
	Username string `json:"username"`
	Date     string `json:"date"`
	MsgType  string `json:"msg_type"`
	Version  string `json:"version"`
}

// message is one decoded wire message. Metadata and Content stay raw JSON
// until a handler decodes the content into the struct it expects, so the
// receive path costs one small struct decode for the header.
type message struct {
	Identities [][]byte // routing frames before <IDS|MSG>; nil on iopub
	Header     header
	Parent     header // zero when parent_header is {}
	// rawHeader is the header frame as received: the parent_header of every
	// reply and output this message causes, sent as is rather than encoded
	// again for each of them.
	rawHeader json.RawMessage
	Metadata  json.RawMessage
	Content   json.RawMessage
	Buffers   [][]byte
	// aside marks a request served beside the shell queue while others
	// are queued or running (queueShell): its statuses are not the
	// kernel's, so a new subscriber is not told "idle" from one while a
	// cell runs.
	aside bool
}

// timestamp formats t as ISO 8601 in UTC with microseconds, the form
// jupyter_client writes and parses.
func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// signer signs and verifies messages with HMAC-SHA256 over the header,
// parent header, metadata and content frames, in that order. A signer with
// an empty key neither signs nor checks, as the protocol specifies. It is
// safe for concurrent use.
type signer struct {
	key  []byte    // immutable; empty disables signing
	macs sync.Pool // of *macState
}

// macState is a reusable HMAC with room for its output, so that signing
// and verifying allocate nothing on the per-message path.
type macState struct {
	h         hash.Hash
	sum, want [sha256.Size]byte
}

func newSigner(key []byte) *signer {
	s := &signer{key: bytes.Clone(key)}
	s.macs.New = func() any { return &macState{h: hmac.New(sha256.New, s.key)} }
	return s
}

// mac computes the MAC of the four signed frames into st.sum.
func (s *signer) mac(st *macState, h, p, md, c []byte) {
	st.h.Reset()
	st.h.Write(h)
	st.h.Write(p)
	st.h.Write(md)
	st.h.Write(c)
	st.h.Sum(st.sum[:0])
}

// sign returns the hex signature of the four frames, or an empty frame when
// signing is disabled.
func (s *signer) sign(h, p, md, c []byte) []byte {
	if len(s.key) == 0 {
		return []byte{}
	}
	st := s.macs.Get().(*macState)
	defer s.macs.Put(st)
	s.mac(st, h, p, md, c)
	out := make([]byte, hex.EncodedLen(sha256.Size))
	hex.Encode(out, st.sum[:])
	return out
}

// verify checks sig against the four frames in constant time.
func (s *signer) verify(sig, h, p, md, c []byte) error {
	if len(s.key) == 0 {
		return nil
	}
	if len(sig) != hex.EncodedLen(sha256.Size) {
		return fmt.Errorf("%w: signature mismatch (got %d hex digits, want %d)", ErrProtocol, len(sig), hex.EncodedLen(sha256.Size))
	}
	st := s.macs.Get().(*macState)
	defer s.macs.Put(st)
	if _, err := hex.Decode(st.want[:], sig); err != nil {
		return fmt.Errorf("%w: signature mismatch (not hex)", ErrProtocol)
	}
	s.mac(st, h, p, md, c)
	if !hmac.Equal(st.sum[:], st.want[:]) {
		return fmt.Errorf("%w: signature mismatch", ErrProtocol)
	}
	return nil
}

// decode parses the frames of one message and verifies its signature. Every
// error wraps ErrProtocol. The returned message aliases frames.
func (s *signer) decode(frames [][]byte) (*message, error) {
	split := -1
	for i, f := range frames {
		if bytes.Equal(f, delimiter) {
			split = i
			break
		}
	}
	if split < 0 {
		return nil, fmt.Errorf("%w: no <IDS|MSG> delimiter in %d frames", ErrProtocol, len(frames))
	}
	rest := frames[split+1:]
	if len(rest) < 5 {
		return nil, fmt.Errorf("%w: got %d frames after <IDS|MSG>, want ≥ 5", ErrProtocol, len(rest))
	}
	sig, h, p, md, c := rest[0], rest[1], rest[2], rest[3], rest[4]
	if err := s.verify(sig, h, p, md, c); err != nil {
		return nil, err
	}
	m := &message{Identities: frames[:split], Metadata: md, Content: c, rawHeader: h}
	if len(rest) > 5 {
		m.Buffers = rest[5:]
	}
	if err := json.Unmarshal(h, &m.Header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrProtocol, err)
	}
	if m.Header.MsgType == "" {
		return nil, fmt.Errorf("%w: header: no msg_type", ErrProtocol)
	}
	// Most requests carry an empty parent; skip the decoder for them.
	if !bytes.Equal(p, emptyObject) {
		if err := json.Unmarshal(p, &m.Parent); err != nil {
			return nil, fmt.Errorf("%w: parent_header: %v", ErrProtocol, err)
		}
	}
	if !isObject(md) {
		return nil, fmt.Errorf("%w: metadata: not a JSON object", ErrProtocol)
	}
	if !isObject(c) {
		return nil, fmt.Errorf("%w: content of %s: not a JSON object", ErrProtocol, m.Header.MsgType)
	}
	return m, nil
}

// isObject reports whether b is one valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// encode builds the frames of one message: identities (or the iopub topic),
// the delimiter, the signature and the four JSON frames. parent is the
// parent's header frame as received (nil for none, sent as {}); content and
// metadata are encoded with encoding/json; nil metadata becomes {}.
func (s *signer) encode(ids [][]byte, h *header, parent json.RawMessage, metadata, content any) ([][]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("kernel: encode %s header: %w", h.MsgType, err)
	}
	pb := emptyObject
	if len(parent) > 0 {
		pb = parent
	}
	mb := emptyObject
	if metadata != nil {
		if mb, err = json.Marshal(metadata); err != nil {
			return nil, fmt.Errorf("kernel: encode %s metadata: %w", h.MsgType, err)
		}
	}
	cb := emptyObject
	if content != nil {
		if cb, err = json.Marshal(content); err != nil {
			return nil, fmt.Errorf("kernel: encode %s content: %w", h.MsgType, err)
		}
	}
	frames := make([][]byte, 0, len(ids)+6)
	frames = append(frames, ids...)
	frames = append(frames, delimiter, s.sign(hb, pb, mb, cb), hb, pb, mb, cb)
	return frames, nil
}

// idSource makes message ids the way ipykernel does: a random session
// prefix and a counter, unique without a random read per message.
type idSource struct {
	prefix string
	n      atomic.Uint64
}

func newIDSource() *idSource {
	return &idSource{prefix: newUUID() + "_"}
}

func (s *idSource) next() string {
	return s.prefix + strconv.FormatUint(s.n.Add(1), 10)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		// crypto/rand.Read never returns an error on supported platforms.
		panic(fmt.Errorf("kernel: reading random bytes for a session id: %w", err))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
