package loopback

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// A joining worker sends joinMagic, its rank and a nonce; rank 0 answers
// with its nonce and its proof; the worker checks it and sends its own
// proof; rank 0 checks that, and sends joinedAck when it takes the worker.
// A proof is the HMAC-SHA256, under the token, of a label naming the side,
// the rank, the size and both nonces.
const (
	joinMagic  = "GTLB"
	joinedAck  = 'k'
	nonceSize  = 32
	proofSize  = sha256.Size
	minToken   = 16
	rank0Label = "gotrain loopback: rank 0"
	rankLabel  = "gotrain loopback: rank"
)

// errJoin wraps every error about a peer that failed the join's checks.
var errJoin = errors.New("loopback: a peer failed the join's checks")

// NewToken returns a fresh random token for one cluster's workers.
func NewToken() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

// ParseToken reads a token as hex, as a launcher passes it.
func ParseToken(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("loopback: the cluster's token: want hex, got %d characters that are not", len(s))
	}
	return b, checkToken(b)
}

func checkToken(token []byte) error {
	if len(token) < minToken {
		return fmt.Errorf("loopback: the cluster's token has %d bytes, want at least %d (NewToken makes one)", len(token), minToken)
	}
	return nil
}

func proof(token []byte, label string, rank, size int, dialNonce, rank0Nonce []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(label))
	m.Write(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(rank)), uint32(size)))
	m.Write(dialNonce)
	m.Write(rank0Nonce)
	return m.Sum(nil)
}

// acceptPeer runs rank 0's side of a join on conn, within joinTimeout and
// before deadline, and returns the peer's rank. The peer must run as this
// process's user, name a rank in [1, size) and prove it holds token.
func acceptPeer(conn net.Conn, token []byte, size int, deadline time.Time) (int, error) {
	conn.SetDeadline(earlier(deadline, time.Now().Add(joinTimeout)))
	defer conn.SetDeadline(time.Time{})
	if err := sameUser(conn); err != nil {
		return 0, err
	}
	var hello [len(joinMagic) + 4 + nonceSize]byte
	if _, err := io.ReadFull(conn, hello[:]); err != nil {
		return 0, fmt.Errorf("%w: reading its hello: %v", errJoin, err)
	}
	if !bytes.Equal(hello[:len(joinMagic)], []byte(joinMagic)) {
		return 0, fmt.Errorf("%w: its hello does not start with %q", errJoin, joinMagic)
	}
	r := int(binary.LittleEndian.Uint32(hello[len(joinMagic):]))
	if r < 1 || r >= size {
		return 0, fmt.Errorf("%w: it names rank %d; want a rank in [1, %d)", errJoin, r, size)
	}
	dialNonce := hello[len(joinMagic)+4:]
	mine := make([]byte, nonceSize)
	rand.Read(mine)
	if _, err := conn.Write(append(mine, proof(token, rank0Label, r, size, dialNonce, mine)...)); err != nil {
		return 0, fmt.Errorf("%w: %v", errJoin, err)
	}
	got := make([]byte, proofSize)
	if _, err := io.ReadFull(conn, got); err != nil {
		return 0, fmt.Errorf("%w: reading its proof: %v", errJoin, err)
	}
	if !hmac.Equal(got, proof(token, rankLabel, r, size, dialNonce, mine)) {
		return 0, fmt.Errorf("%w: rank %d's proof is wrong (it does not hold the cluster's token)", errJoin, r)
	}
	return r, nil
}

// dialPeer runs a joining worker's side on conn: rank 0 must run as this
// process's user and prove it holds token before the worker proves it
// does, and must then take the worker.
func dialPeer(conn net.Conn, token []byte, rank, size int) error {
	conn.SetDeadline(time.Now().Add(joinTimeout))
	defer conn.SetDeadline(time.Time{})
	if err := sameUser(conn); err != nil {
		return err
	}
	mine := make([]byte, nonceSize)
	rand.Read(mine)
	hello := append(binary.LittleEndian.AppendUint32([]byte(joinMagic), uint32(rank)), mine...)
	if _, err := conn.Write(hello); err != nil {
		return err
	}
	var answer [nonceSize + proofSize]byte
	if _, err := io.ReadFull(conn, answer[:]); err != nil {
		return fmt.Errorf("%w: reading rank 0's answer: %v", errJoin, err)
	}
	theirs := answer[:nonceSize]
	if !hmac.Equal(answer[nonceSize:], proof(token, rank0Label, rank, size, mine, theirs)) {
		return fmt.Errorf("%w: the peer did not prove it is rank 0 (it does not hold the cluster's token)", errJoin)
	}
	if _, err := conn.Write(proof(token, rankLabel, rank, size, mine, theirs)); err != nil {
		return err
	}
	var ack [1]byte
	if _, err := io.ReadFull(conn, ack[:]); err != nil || ack[0] != joinedAck {
		return fmt.Errorf("%w: rank 0 did not take this worker (another took rank %d, or the size differs)", errJoin, rank)
	}
	return nil
}

// sameUser checks, on a Unix socket, that the peer runs as this process's
// effective user.
func sameUser(conn net.Conn) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil
	}
	uid, err := peerUID(uc)
	if err != nil {
		return fmt.Errorf("%w: its user: %v", errJoin, err)
	}
	if want := os.Geteuid(); uid != want && uid >= 0 {
		return fmt.Errorf("%w: it runs as user %d, want %d", errJoin, uid, want)
	}
	return nil
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
