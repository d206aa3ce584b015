// Package loopback is a strategy.Cluster of worker processes on one machine,
// joined by a Unix socket, without MPI: the multi-worker tests run on it
// under plain `go test`, and it needs nothing installed.
//
// It is a star: every collective sends each worker's data to rank 0, which
// combines them in rank order and sends the result back. The sums are
// therefore the sums in rank order, the same bits on every worker and for
// every worker count that splits a batch the same way (MPI's tree orders
// differ). Rank 0 also checks that every worker called the same collective
// with the same length, so a worker whose program diverged gets an error
// naming it instead of a hang.
//
// # Joining
//
// The workers of one cluster share a token (NewToken), which their
// launcher gives each. A worker joining rank 0 and rank 0 prove to each
// other that they hold it, without sending it: each sends a nonce and
// answers the other's with an HMAC-SHA256 under the token. On Linux each
// side also checks, by SO_PEERCRED, that the other runs as the same user.
// Rank 0 drops a peer that fails any check and goes on waiting for the
// workers; a peer that passes them with a rank already taken is an error.
//
// # Frames
//
// A collective's frame is an op byte, a little-endian uint64 length, and
// the payload. A length above MaxPayload is an error, and a payload of a
// length the receiver cannot know (AllGather's, Broadcast's) is read in
// growing pieces as it arrives, so a length that no payload follows
// allocates nothing big.
package loopback

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"time"
	"unsafe"
)

// The collectives, as they travel in a request's header.
const (
	opAllReduceF32 byte = 1 + iota
	opAllReduceF64
	opAllGather
	opBroadcast
)

var opNames = map[byte]string{opAllReduceF32: "AllReduceF32", opAllReduceF64: "AllReduceF64", opAllGather: "AllGather", opBroadcast: "Broadcast"}

// Cluster is one worker's end of a loopback cluster. Its methods must not
// be called concurrently (strategy.Cluster's contract).
type Cluster struct {
	rank, size int
	peers      []net.Conn // rank 0: the connection of each rank (nil at 0); others: [0] to rank 0
	ln         net.Listener
	hdr        [13]byte
	scratch    [][]byte // rank 0: each rank's payload
}

// MaxPayload bounds one frame's payload: 4 GiB, more than a collective of
// the models a loopback cluster trains sends in one call.
const MaxPayload = 1 << 32

// joinTimeout bounds one peer's handshake, so that a silent peer holds up
// rank 0 for a moment only.
const joinTimeout = 5 * time.Second

// Listen is rank 0 of a cluster of size workers holding token: it listens
// on the Unix socket path and waits, up to timeout, until every other rank
// has joined.
func Listen(path string, size int, token []byte, timeout time.Duration) (*Cluster, error) {
	if size < 1 {
		return nil, fmt.Errorf("loopback: want at least 1 worker, got %d", size)
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("loopback: listen: %w", err)
	}
	c := &Cluster{rank: 0, size: size, ln: ln, peers: make([]net.Conn, size), scratch: make([][]byte, size)}
	deadline := time.Now().Add(timeout)
	var refused []error
	for joined := 1; joined < size; {
		ln.(*net.UnixListener).SetDeadline(deadline)
		conn, err := ln.Accept()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("loopback: %d of %d workers joined before the timeout: %w", joined, size, errors.Join(append([]error{err}, refused...)...))
		}
		r, err := acceptPeer(conn, token, size, deadline)
		if err != nil {
			conn.Close()
			refused = append(refused, err)
			continue
		}
		if c.peers[r] != nil {
			conn.Close()
			c.Close()
			return nil, fmt.Errorf("loopback: two workers joined as rank %d", r)
		}
		if _, err := conn.Write([]byte{joinedAck}); err != nil {
			conn.Close()
			c.Close()
			return nil, fmt.Errorf("loopback: rank %d: %w", r, err)
		}
		c.peers[r] = conn
		joined++
	}
	return c, nil
}

// Dial joins the cluster of size workers holding token, whose rank 0
// listens on path, as rank, retrying until timeout while rank 0 is not
// listening yet.
func Dial(path string, rank, size int, token []byte, timeout time.Duration) (*Cluster, error) {
	if rank < 1 || rank >= size {
		return nil, fmt.Errorf("loopback: Dial: want a rank in [1, %d), got %d", size, rank)
	}
	if err := checkToken(token); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.Dial("unix", path)
		if err == nil {
			if err := dialPeer(conn, token, rank, size); err != nil {
				conn.Close()
				return nil, fmt.Errorf("loopback: rank %d: joining rank 0 at %s: %w", rank, path, err)
			}
			return &Cluster{rank: rank, size: size, peers: []net.Conn{conn}}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("loopback: rank %d: rank 0 is not listening on %s: %w", rank, path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Join joins the cluster of size workers holding token at the Unix socket
// path as rank: rank 0 listens (Listen), the others dial (Dial), each
// waiting up to timeout for the others.
func Join(path string, rank, size int, token []byte, timeout time.Duration) (*Cluster, error) {
	if rank == 0 {
		return Listen(path, size, token, timeout)
	}
	return Dial(path, rank, size, token, timeout)
}

// Rank returns this worker's rank.
func (c *Cluster) Rank() int { return c.rank }

// Size returns the number of workers.
func (c *Cluster) Size() int { return c.size }

// Close closes the worker's connections.
func (c *Cluster) Close() error {
	var errs []error
	for _, p := range c.peers {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if c.ln != nil {
		errs = append(errs, c.ln.Close())
	}
	return errors.Join(errs...)
}

// AllReduceF32 sums buf over workers in rank order, in place.
func (c *Cluster) AllReduceF32(buf []float32) error {
	return c.allReduce(opAllReduceF32, bytesOf(buf), func(out []byte, parts [][]byte) {
		sum := floatsOf[float32](out)
		for _, p := range parts[1:] {
			for i, x := range floatsOf[float32](p) {
				sum[i] += x
			}
		}
	})
}

// AllReduceF64 sums buf over workers in rank order, in place.
func (c *Cluster) AllReduceF64(buf []float64) error {
	return c.allReduce(opAllReduceF64, bytesOf(buf), func(out []byte, parts [][]byte) {
		sum := floatsOf[float64](out)
		for _, p := range parts[1:] {
			for i, x := range floatsOf[float64](p) {
				sum[i] += x
			}
		}
	})
}

// allReduce runs one reduction: rank 0 gets every rank's bytes (its own in
// buf, which becomes the result), combines them with add and sends buf
// back; every other rank sends buf and reads the result into it.
func (c *Cluster) allReduce(op byte, buf []byte, add func(out []byte, parts [][]byte)) error {
	if c.rank != 0 {
		if err := c.send(c.peers[0], op, buf); err != nil {
			return err
		}
		return c.receive(buf)
	}
	parts, err := c.gather(op, buf, true)
	if err != nil {
		return err
	}
	add(buf, parts)
	return c.reply(buf)
}

// AllGather returns every worker's local, in rank order.
func (c *Cluster) AllGather(local []float64) ([][]float64, error) {
	if c.rank != 0 {
		if err := c.send(c.peers[0], opAllGather, bytesOf(local)); err != nil {
			return nil, err
		}
		all, err := c.receiveAll()
		if err != nil {
			return nil, err
		}
		return decodeAll(all, c.size)
	}
	parts, err := c.gather(opAllGather, bytesOf(local), false)
	if err != nil {
		return nil, err
	}
	all := encodeAll(parts)
	if err := c.reply(all); err != nil {
		return nil, err
	}
	return decodeAll(all, c.size)
}

// Broadcast returns root's buf on every worker.
func (c *Cluster) Broadcast(buf []byte, root int) ([]byte, error) {
	if root < 0 || root >= c.size {
		return nil, fmt.Errorf("loopback: Broadcast: want a root in [0, %d), got %d", c.size, root)
	}
	mine := buf
	if c.rank != root {
		mine = nil
	}
	if c.rank != 0 {
		if err := c.send(c.peers[0], opBroadcast, mine); err != nil {
			return nil, err
		}
		return c.receiveAll()
	}
	parts, err := c.gather(opBroadcast, mine, false)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(parts[root])
	if err := c.reply(out); err != nil {
		return nil, err
	}
	return out, nil
}

// gather is rank 0 reading every other rank's request for op, in rank
// order; parts[0] is rank 0's own payload. With sameLen, every payload
// must have rank 0's length. A mismatch is sent to every rank as the
// collective's error.
func (c *Cluster) gather(op byte, own []byte, sameLen bool) ([][]byte, error) {
	parts := c.scratch
	parts[0] = own
	var mismatch error
	for r := 1; r < c.size; r++ {
		gotOp, n, err := c.readHeader(c.peers[r])
		if err != nil {
			return nil, fmt.Errorf("loopback: worker %d: %w", r, err)
		}
		switch {
		case mismatch != nil:
		case gotOp != op:
			mismatch = fmt.Errorf("loopback: worker %d called %s while worker 0 called %s: the workers' programs differ", r, opName(gotOp), opNames[op])
		case sameLen && n != uint64(len(own)):
			mismatch = fmt.Errorf("loopback: worker %d's %s has %d bytes, worker 0's %d: the workers' programs differ", r, opNames[op], n, len(own))
		}
		if mismatch != nil {
			// Read past it, keeping nothing: the workers stay in step.
			if _, err := io.CopyN(io.Discard, c.peers[r], int64(n)); err != nil {
				return nil, fmt.Errorf("loopback: worker %d: %w", r, err)
			}
			continue
		}
		if sameLen && uint64(cap(parts[r])) < n {
			// n is rank 0's own length: known good.
			parts[r] = make([]byte, n)
		}
		if parts[r], err = readPayload(c.peers[r], parts[r], n); err != nil {
			return nil, fmt.Errorf("loopback: worker %d: %w", r, err)
		}
	}
	if mismatch != nil {
		msg := []byte(mismatch.Error())
		for r := 1; r < c.size; r++ {
			c.write(c.peers[r], opError, msg)
		}
		return nil, mismatch
	}
	return parts, nil
}

// opName names an op from the wire, which may be none.
func opName(op byte) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("op %#x", op)
}

// readPayload reads a payload of n bytes, into buf's storage when it has
// room, else into storage that grows as the bytes arrive, doubling from
// 1 MiB: a peer that announces more than it sends costs at most about
// twice what it sent.
func readPayload(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	if uint64(cap(buf)) >= n {
		buf = buf[:n]
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf = buf[:0]
	for uint64(len(buf)) < n {
		piece := int(min(n-uint64(len(buf)), uint64(max(len(buf), 1<<20))))
		buf = slices.Grow(buf, piece)
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+piece])
		buf = buf[:len(buf)+m]
		if err != nil {
			return nil, fmt.Errorf("a payload of %d bytes cut short at %d: %w", n, len(buf), err)
		}
	}
	return buf, nil
}

// reply sends the collective's result to every other rank.
func (c *Cluster) reply(out []byte) error {
	for r := 1; r < c.size; r++ {
		if err := c.write(c.peers[r], 0, out); err != nil {
			return fmt.Errorf("loopback: worker %d: %w", r, err)
		}
	}
	return nil
}

func (c *Cluster) send(conn net.Conn, op byte, payload []byte) error {
	if err := c.write(conn, op, payload); err != nil {
		return fmt.Errorf("loopback: worker %d: sending to worker 0: %w", c.rank, err)
	}
	return nil
}

// write sends a header (op, length) and the payload.
func (c *Cluster) write(conn net.Conn, op byte, payload []byte) error {
	if len(payload) > MaxPayload {
		return fmt.Errorf("a payload of %d bytes, over the loopback cluster's limit of %d (MPI has none: %%workers -np)", len(payload), MaxPayload)
	}
	c.hdr[0] = op
	binary.LittleEndian.PutUint64(c.hdr[1:9], uint64(len(payload)))
	if _, err := conn.Write(c.hdr[:9]); err != nil {
		return err
	}
	if len(payload) == 0 {
		// An empty write is still a write(2): by then the peer may have
		// taken the header as the whole message, answered and closed, and
		// the write would fail with a broken pipe.
		return nil
	}
	_, err := conn.Write(payload)
	return err
}

// readHeader reads a frame's header; a length over MaxPayload is an error.
func (c *Cluster) readHeader(conn net.Conn) (op byte, n uint64, err error) {
	if _, err := io.ReadFull(conn, c.hdr[:9]); err != nil {
		return 0, 0, err
	}
	op, n = c.hdr[0], binary.LittleEndian.Uint64(c.hdr[1:9])
	if n > MaxPayload {
		return 0, 0, fmt.Errorf("a frame of %d bytes, over the limit of %d", n, MaxPayload)
	}
	return op, n, nil
}

// opError is the op of a reply that carries a collective's error, which is
// at most maxErrorText bytes.
const (
	opError      byte = 0xff
	maxErrorText      = 64 << 10
)

// readError reads the error text of an opError reply of n bytes.
func readError(conn net.Conn, n uint64) error {
	if n > maxErrorText {
		return fmt.Errorf("worker 0 failed the collective with an error text of %d bytes, over %d", n, maxErrorText)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return fmt.Errorf("reading worker 0's error: %w", err)
	}
	return errors.New(string(msg))
}

// receive reads rank 0's reply into buf, which has the reply's length.
func (c *Cluster) receive(buf []byte) error {
	op, n, err := c.readHeader(c.peers[0])
	if err != nil {
		return fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	if op == opError {
		return readError(c.peers[0], n)
	}
	if n != uint64(len(buf)) {
		return fmt.Errorf("loopback: worker %d: worker 0 replied %d bytes, want %d", c.rank, n, len(buf))
	}
	if _, err := io.ReadFull(c.peers[0], buf); err != nil {
		return fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	return nil
}

// receiveAll reads a reply of any length.
func (c *Cluster) receiveAll() ([]byte, error) {
	op, n, err := c.readHeader(c.peers[0])
	if err != nil {
		return nil, fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	if op == opError {
		return nil, readError(c.peers[0], n)
	}
	out, err := readPayload(c.peers[0], nil, n)
	if err != nil {
		return nil, fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	return out, nil
}

// encodeAll lays out every rank's payload behind its length.
func encodeAll(parts [][]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = binary.LittleEndian.AppendUint64(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

func decodeAll(b []byte, size int) ([][]float64, error) {
	out := make([][]float64, size)
	for r := range size {
		if len(b) < 8 {
			return nil, fmt.Errorf("loopback: AllGather: a reply cut short at worker %d", r)
		}
		n64 := binary.LittleEndian.Uint64(b)
		b = b[8:]
		if n64 > uint64(len(b)) || n64%8 != 0 {
			return nil, fmt.Errorf("loopback: AllGather: worker %d's part of %d bytes does not fit", r, n64)
		}
		n := int(n64)
		out[r] = make([]float64, n/8)
		for i := range out[r] {
			out[r][i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		b = b[n:]
	}
	return out, nil
}

// bytesOf views a float slice's memory as bytes, in the machine's byte
// order: every worker of a loopback cluster runs on the same machine.
func bytesOf[T float32 | float64](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(x))), len(x)*int(unsafe.Sizeof(x[0])))
}

func floatsOf[T float32 | float64](b []byte) []T {
	var zero T
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(zero)))
}
