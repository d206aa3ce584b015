package kernel

import (
	"encoding/json"
	"time"
)

// Test-only access to internals.

// QueuedShell reports how many shell requests wait for the shell worker.
func QueuedShell(k *Kernel) int {
	k.shellQ.mu.Lock()
	defer k.shellQ.mu.Unlock()
	return len(k.shellQ.reqs)
}

// GlobMatch is the history search matcher.
var GlobMatch = globMatch

// Sign returns the kernel's signature of four frames under key.
func Sign(key, h, p, md, c []byte) string { return string(newSigner(key).sign(h, p, md, c)) }

// Decoded is what decode found in a message.
type Decoded struct {
	Identities int
	MsgType    string
	ParentID   string
	Content    string
	Buffers    int
}

// Decode decodes and verifies frames under key.
func Decode(key []byte, frames [][]byte) (Decoded, error) {
	return NewDecoder(key)(frames)
}

// NewDecoder returns Decode for one key, reusing its signer as the kernel
// does.
func NewDecoder(key []byte) func([][]byte) (Decoded, error) {
	s := newSigner(key)
	return func(frames [][]byte) (Decoded, error) { return s.decode1(frames) }
}

func (s *signer) decode1(frames [][]byte) (Decoded, error) {
	m, err := s.decode(frames)
	if err != nil {
		return Decoded{}, err
	}
	return Decoded{
		Identities: len(m.Identities),
		MsgType:    m.Header.MsgType,
		ParentID:   m.Parent.MsgID,
		Content:    string(m.Content),
		Buffers:    len(m.Buffers),
	}, nil
}

// Encode builds the signed frames of a kernel message with the given
// identities, type and content; parentID, when set, names the parent.
func Encode(key []byte, ids [][]byte, msgType, parentID string, content any) ([][]byte, error) {
	h := header{MsgID: "m1", Session: "s", Username: "u", Date: "2026-01-02T03:04:05.000006Z", MsgType: msgType, Version: protocolVersion}
	var p json.RawMessage
	if parentID != "" {
		var err error
		if p, err = json.Marshal(header{MsgID: parentID, MsgType: "execute_request"}); err != nil {
			return nil, err
		}
	}
	return newSigner(key).encode(ids, &h, p, nil, content)
}

// IOPubDropped returns how many iopub messages the kernel dropped for slow
// subscribers, and how many of them it disconnected.
func IOPubDropped(k *Kernel) (dropped, disconnected uint64) {
	return k.drops.dropped.Load(), k.drops.disconnected.Load()
}

// MaxReplayIDs is the most headers the replay guard remembers.
const MaxReplayIDs = maxReplayIDs

// ReplayGuard is the replay guard, fed with bare headers.
type ReplayGuard struct{ g *replayGuard }

func NewReplayGuard(window time.Duration) ReplayGuard { return ReplayGuard{newReplayGuard(window)} }

// First reports whether header was not seen within the window before now.
func (r ReplayGuard) First(header string, now time.Time) bool {
	return r.g.first(&message{rawHeader: []byte(header)}, now)
}

// Len returns how many headers the guard remembers.
func (r ReplayGuard) Len() int { return r.g.len() }
