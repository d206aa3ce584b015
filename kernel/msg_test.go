package kernel_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

// TestSignGolden checks signatures against vectors computed outside this
// package: the first is the published HMAC-SHA256 example (RFC 4231 style
// "quick brown fox" vector from Wikipedia), split across the four signed
// frames; the second was computed with Python's hmac module.
func TestSignGolden(t *testing.T) {
	tests := []struct {
		name          string
		key           string
		h, p, md, c   string
		want          string
		wantUnchanged bool
	}{
		{
			name: "quick brown fox",
			key:  "key",
			h:    "The quick ", p: "brown fox ", md: "jumps over ", c: "the lazy dog",
			want: "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
		},
		{
			name: "kernel_info_request",
			key:  "a0436f6c-1916-498b-8eb9-e81ab9368e84",
			h:    `{"msg_id":"1","msg_type":"kernel_info_request"}`, p: "{}", md: "{}", c: "{}",
			want: "23d21ade63d42fc48bbe2721cd9045ceffb260c3521b7d246495f23adfca79a0",
		},
		{name: "empty key signs nothing", key: "", h: "{}", p: "{}", md: "{}", c: "{}", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kernel.Sign([]byte(tt.key), []byte(tt.h), []byte(tt.p), []byte(tt.md), []byte(tt.c))
			if got != tt.want {
				t.Errorf("Sign(%q, %q %q %q %q) = %q, want %q", tt.key, tt.h, tt.p, tt.md, tt.c, got, tt.want)
			}
			if tt.key == "" {
				return
			}
			// And against crypto/hmac directly.
			mac := hmac.New(sha256.New, []byte(tt.key))
			mac.Write([]byte(tt.h + tt.p + tt.md + tt.c))
			if direct := hex.EncodeToString(mac.Sum(nil)); direct != tt.want {
				t.Errorf("crypto/hmac gives %q, vector says %q", direct, tt.want)
			}
		})
	}
}

// frames builds the wire frames of a client request signed with key.
func frames(t testing.TB, ids []string, key, h, p, md, c string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, id := range ids {
		out = append(out, []byte(id))
	}
	sig := kerneltest.Sign([]byte(key), []byte(h), []byte(p), []byte(md), []byte(c))
	return append(out, []byte("<IDS|MSG>"), []byte(sig), []byte(h), []byte(p), []byte(md), []byte(c))
}

const (
	testKey   = "secret-key"
	reqHeader = `{"msg_id":"abc","session":"s1","username":"u","date":"2026-11-30T10:00:00.000000Z","msg_type":"execute_request","version":"5.3"}`
)

func TestDecode(t *testing.T) {
	good := frames(t, []string{"id1", "id2"}, testKey, reqHeader, "{}", "{}", `{"code":"1+1"}`)
	withParent := frames(t, nil, testKey, reqHeader, `{"msg_id":"p1","msg_type":"x"}`, "{}", "{}")
	tamper := func(i int, v string) [][]byte {
		f := append([][]byte(nil), good...)
		f[i] = []byte(v)
		return f
	}
	tests := []struct {
		name    string
		key     string
		frames  [][]byte
		want    kernel.Decoded
		wantErr string // substring; empty means success
	}{
		{name: "two identities", key: testKey, frames: good,
			want: kernel.Decoded{Identities: 2, MsgType: "execute_request", Content: `{"code":"1+1"}`}},
		{name: "parent and buffers", key: testKey, frames: append(withParent, []byte("buf")),
			want: kernel.Decoded{MsgType: "execute_request", ParentID: "p1", Content: "{}", Buffers: 1}},
		{name: "no key accepts any signature", key: "", frames: tamper(3, "bogus"),
			want: kernel.Decoded{Identities: 2, MsgType: "execute_request", Content: `{"code":"1+1"}`}},
		{name: "forged signature", key: testKey, frames: tamper(3, strings.Repeat("0", 64)), wantErr: "signature mismatch"},
		{name: "short signature", key: testKey, frames: tamper(3, "abcd"), wantErr: "got 4 hex digits, want 64"},
		{name: "non-hex signature", key: testKey, frames: tamper(3, strings.Repeat("z", 64)), wantErr: "not hex"},
		{name: "tampered content", key: testKey, frames: tamper(7, `{"code":"rm"}`), wantErr: "signature mismatch"},
		{name: "no delimiter", key: testKey, frames: good[:2], wantErr: "no <IDS|MSG> delimiter in 2 frames"},
		{name: "too few frames", key: testKey, frames: good[:6], wantErr: "got 3 frames after <IDS|MSG>, want ≥ 5"},
		{name: "bad header json", key: "", frames: frames(t, nil, "", `{"msg_id":`, "{}", "{}", "{}"), wantErr: "header"},
		{name: "no msg_type", key: "", frames: frames(t, nil, "", `{"msg_id":"1"}`, "{}", "{}", "{}"), wantErr: "no msg_type"},
		{name: "bad parent", key: "", frames: frames(t, nil, "", reqHeader, `[1]`, "{}", "{}"), wantErr: "parent_header"},
		{name: "metadata not object", key: "", frames: frames(t, nil, "", reqHeader, "{}", "null", "{}"), wantErr: "metadata"},
		{name: "content not json", key: testKey, frames: frames(t, nil, testKey, reqHeader, "{}", "{}", `{"code":`), wantErr: "content of execute_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kernel.Decode([]byte(tt.key), tt.frames)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Decode error = %v, want one containing %q", err, tt.wantErr)
				}
				if !errors.Is(err, kernel.ErrProtocol) {
					t.Errorf("Decode error %v does not wrap ErrProtocol", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tt.want {
				t.Errorf("Decode = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, key := range []string{"", testKey} {
		f, err := kernel.Encode([]byte(key), [][]byte{[]byte("peer")}, "execute_reply", "parent-1", map[string]any{"status": "ok"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := kernel.Decode([]byte(key), f)
		if err != nil {
			t.Fatalf("key %q: decoding our own message: %v", key, err)
		}
		want := kernel.Decoded{Identities: 1, MsgType: "execute_reply", ParentID: "parent-1", Content: `{"status":"ok"}`}
		if got != want {
			t.Errorf("key %q: round trip = %+v, want %+v", key, got, want)
		}
		if key != "" && !bytes.Equal(f[2], []byte(kerneltest.Sign([]byte(key), f[3], f[4], f[5], f[6]))) {
			t.Errorf("key %q: kernel signature %q disagrees with the test client's", key, f[2])
		}
	}
}

// FuzzDecode feeds arbitrary frames to decode: it must never panic, and a
// message it accepts must re-encode to one it accepts again.
func FuzzDecode(f *testing.F) {
	join := func(fr [][]byte) []byte { return bytes.Join(fr, []byte{0xff}) }
	f.Add(join(frames(f, []string{"id"}, testKey, reqHeader, "{}", "{}", `{"code":"1"}`)), []byte(testKey))
	f.Add(join(frames(f, nil, "", reqHeader, `{"msg_id":"p"}`, "{}", "{}")), []byte{})
	f.Add([]byte("<IDS|MSG>"), []byte(testKey))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, raw, key []byte) {
		fr := bytes.Split(raw, []byte{0xff})
		// Without a key nothing is verified, so the JSON paths see every
		// input, not only the ones with a valid signature.
		if _, err := kernel.Decode(nil, fr); err != nil && !errors.Is(err, kernel.ErrProtocol) {
			t.Fatalf("unkeyed: error %v does not wrap ErrProtocol", err)
		}
		d, err := kernel.Decode(key, fr)
		if err != nil {
			if !errors.Is(err, kernel.ErrProtocol) {
				t.Fatalf("error %v does not wrap ErrProtocol", err)
			}
			return
		}
		if d.MsgType == "" {
			t.Fatalf("accepted a message without msg_type")
		}
		again, err := kernel.Encode(key, nil, d.MsgType, d.ParentID, nil)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if _, err := kernel.Decode(key, again); err != nil {
			t.Fatalf("decode of re-encoded %+v: %v", d, err)
		}
	})
}

// capturedExecute is an execute_request as jupyter_client 8 sends it from a
// notebook (identities, delimiter, signature, four JSON frames).
func capturedExecute(b *testing.B) [][]byte {
	h := `{"msg_id": "d3f5e2c1-7b0a4c1e9f2d_5811_12", "msg_type": "execute_request", "username": "user", "session": "d3f5e2c1-7b0a4c1e9f2d", "date": "2026-11-30T10:15:42.318215Z", "version": "5.3"}`
	md := `{"deletedCells": [], "recordTiming": false, "cellId": "6a0d9f3e-3c1b-4a57-9d42-8f7e6b5a4c3d"}`
	c := `{"code": "for it := dist.Iter(); it.Next(); {\n    loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))\n    fmt.Println(loss)\n}", "silent": false, "store_history": true, "user_expressions": {}, "allow_stdin": true, "stop_on_error": true}`
	return frames(b, []string{"d3f5e2c1-7b0a4c1e9f2d"}, "a0436f6c-1916-498b-8eb9-e81ab9368e84", h, "{}", md, c)
}

var sinkDecoded kernel.Decoded

func BenchmarkDecode(b *testing.B) {
	fr := capturedExecute(b)
	key := []byte("a0436f6c-1916-498b-8eb9-e81ab9368e84")
	n := 0
	for _, f := range fr {
		n += len(f)
	}
	decode := kernel.NewDecoder(key)
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		d, err := decode(fr)
		if err != nil {
			b.Fatal(err)
		}
		sinkDecoded = d
	}
}
