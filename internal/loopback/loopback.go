// Package loopback is a strategy.Cluster of worker processes on one machine,
// joined by a Unix socket, without MPI: the multi-worker tests run on it
// under plain `go test`, and it needs nothing installed.
//
// It is a star: every collective sends each worker's data to rank 0, which
// combines them in rank order and sends the result back. The sums are
// therefore the sums in rank order, the same bits on every worker and for
// every worker count that splits a batch the same way (MPI's tree orders
// differ: ../shared/notes/design-next.md §2.4). Rank 0 also checks that
// every worker called the same collective with the same length, so a worker
// whose program diverged gets an error naming it instead of a hang.
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

// Listen is rank 0 of a cluster of size workers: it listens on the Unix
// socket path and waits, up to timeout, until every other rank has dialed.
func Listen(path string, size int, timeout time.Duration) (*Cluster, error) {
	if size < 1 {
		return nil, fmt.Errorf("loopback: want at least 1 worker, got %d", size)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("loopback: listen: %w", err)
	}
	c := &Cluster{rank: 0, size: size, ln: ln, peers: make([]net.Conn, size), scratch: make([][]byte, size)}
	deadline := time.Now().Add(timeout)
	for joined := 1; joined < size; joined++ {
		ln.(*net.UnixListener).SetDeadline(deadline)
		conn, err := ln.Accept()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("loopback: %d of %d workers joined before the timeout: %w", joined, size, err)
		}
		var b [4]byte
		conn.SetReadDeadline(deadline)
		if _, err := io.ReadFull(conn, b[:]); err != nil {
			conn.Close()
			c.Close()
			return nil, fmt.Errorf("loopback: reading a joining worker's rank: %w", err)
		}
		conn.SetReadDeadline(time.Time{})
		r := int(binary.LittleEndian.Uint32(b[:]))
		if r < 1 || r >= size || c.peers[r] != nil {
			conn.Close()
			c.Close()
			return nil, fmt.Errorf("loopback: a worker joined as rank %d; want a rank in [1, %d) not taken", r, size)
		}
		c.peers[r] = conn
	}
	return c, nil
}

// Dial joins the cluster whose rank 0 listens on path, as rank, retrying
// until timeout while rank 0 is not listening yet.
func Dial(path string, rank, size int, timeout time.Duration) (*Cluster, error) {
	if rank < 1 || rank >= size {
		return nil, fmt.Errorf("loopback: Dial: want a rank in [1, %d), got %d", size, rank)
	}
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.Dial("unix", path)
		if err == nil {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], uint32(rank))
			if _, err := conn.Write(b[:]); err != nil {
				conn.Close()
				return nil, fmt.Errorf("loopback: rank %d: %w", rank, err)
			}
			return &Cluster{rank: rank, size: size, peers: []net.Conn{conn}}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("loopback: rank %d: rank 0 is not listening on %s: %w", rank, path, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Join joins the cluster of size workers at the Unix socket path as rank:
// rank 0 listens (Listen), the others dial (Dial), each waiting up to
// timeout for the others.
func Join(path string, rank, size int, timeout time.Duration) (*Cluster, error) {
	if rank == 0 {
		return Listen(path, size, timeout)
	}
	return Dial(path, rank, size, timeout)
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
		if cap(parts[r]) < n {
			parts[r] = make([]byte, n)
		}
		parts[r] = parts[r][:n]
		if _, err := io.ReadFull(c.peers[r], parts[r]); err != nil {
			return nil, fmt.Errorf("loopback: worker %d: %w", r, err)
		}
		switch {
		case mismatch != nil:
		case gotOp != op:
			mismatch = fmt.Errorf("loopback: worker %d called %s while worker 0 called %s: the workers' programs differ", r, opNames[gotOp], opNames[op])
		case sameLen && n != len(own):
			mismatch = fmt.Errorf("loopback: worker %d's %s has %d bytes, worker 0's %d: the workers' programs differ", r, opNames[op], n, len(own))
		}
	}
	if mismatch != nil {
		msg := []byte(mismatch.Error())
		for r := 1; r < c.size; r++ {
			c.write(c.peers[r], 0xff, msg)
		}
		return nil, mismatch
	}
	return parts, nil
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

func (c *Cluster) readHeader(conn net.Conn) (op byte, n int, err error) {
	if _, err := io.ReadFull(conn, c.hdr[:9]); err != nil {
		return 0, 0, err
	}
	return c.hdr[0], int(binary.LittleEndian.Uint64(c.hdr[1:9])), nil
}

// receive reads rank 0's reply into buf, which has the reply's length.
func (c *Cluster) receive(buf []byte) error {
	op, n, err := c.readHeader(c.peers[0])
	if err != nil {
		return fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	if op == 0xff {
		msg := make([]byte, n)
		io.ReadFull(c.peers[0], msg)
		return errors.New(string(msg))
	}
	if n != len(buf) {
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
	out := make([]byte, n)
	if _, err := io.ReadFull(c.peers[0], out); err != nil {
		return nil, fmt.Errorf("loopback: worker %d: reading worker 0's reply: %w", c.rank, err)
	}
	if op == 0xff {
		return nil, errors.New(string(out))
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
		n := int(binary.LittleEndian.Uint64(b))
		b = b[8:]
		if n > len(b) || n%8 != 0 {
			return nil, fmt.Errorf("loopback: AllGather: worker %d's part of %d bytes does not fit", r, n)
		}
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
