//go:build mpi && cgo

package mpi

/*
#cgo pkg-config: ompi
#include <stdint.h>
#include <mpi.h>

// MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_IN_PLACE, …) are macros
// that cgo cannot reach; these wrappers hold them on the C side.

enum { gt_max_error_string = MPI_MAX_ERROR_STRING };

static int gt_init(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, provided);
}
static MPI_Comm gt_comm_world(void) { return MPI_COMM_WORLD; }
static MPI_Comm gt_comm_null(void) { return MPI_COMM_NULL; }
static int gt_errors_return(MPI_Comm c) {
	return MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
}
// f64 picks MPI_DOUBLE, else MPI_FLOAT.
static int gt_allreduce_sum(void *buf, int n, int f64, MPI_Comm c) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, f64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, c);
}
static int gt_allgather_int(int *send, int *recv, MPI_Comm c) {
	return MPI_Allgather(send, 1, MPI_INT, recv, 1, MPI_INT, c);
}
static int gt_allgatherv_f64(double *send, int n, double *recv, int *counts, int *displs, MPI_Comm c) {
	return MPI_Allgatherv(send, n, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, c);
}
static int gt_bcast_int64(int64_t *v, int root, MPI_Comm c) {
	return MPI_Bcast(v, 1, MPI_INT64_T, root, c);
}
static int gt_bcast_bytes(void *buf, int n, int root, MPI_Comm c) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, c);
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// World is this process's rank in MPI_COMM_WORLD, through a duplicate of
// that communicator. It is not safe for concurrent use (see the package
// doc), and must not be used after Finalize.
type World struct {
	comm       C.MPI_Comm  // immutable until Finalize frees it
	rank, size int         // immutable
	finalized  atomic.Bool // set by Finalize before it frees comm

	stop chan struct{} // closed by Finalize: the MPI thread finalizes
	done chan error    // the MPI thread's MPI_Finalize result, then closed
}

// mu serializes Init and Finalize: MPI is initialized once per process.
var mu struct {
	sync.Mutex
	world     *World // the world Init made; nil until then
	err       error  // Init's error, given again by every later Init
	finalized bool
}

// Built reports whether this binary has the binding: true with the mpi
// tag.
const Built = true

// Init initializes MPI, asking for MPI_THREAD_MULTIPLE, and returns this
// process's World. A later Init returns the same World, or the same error;
// after Finalize it returns an error wrapping [ErrFinalized]. Run without
// mpirun, the process is a world of its own (a singleton, of Size 1).
func Init() (*World, error) {
	mu.Lock()
	defer mu.Unlock()
	switch {
	case mu.finalized:
		return nil, fmt.Errorf("mpi: Init after Finalize: %w (MPI cannot be initialized twice in one process)", ErrFinalized)
	case mu.world != nil || mu.err != nil:
		return mu.world, mu.err
	}
	w := &World{stop: make(chan struct{}), done: make(chan error, 1)}
	started := make(chan error)
	go w.thread(started)
	if err := <-started; err != nil {
		mu.err = fmt.Errorf("mpi: Init: %w", err)
		return nil, mu.err
	}
	mu.world = w
	return w, nil
}

// thread is the goroutine that Init starts and Finalize ends. It stays
// locked to the OS thread that calls MPI_Init_thread and MPI_Finalize; the
// thread exits with it.
func (w *World) thread(started chan<- error) {
	runtime.LockOSThread()
	if err := w.init(); err != nil {
		started <- err
		return
	}
	close(started)
	<-w.stop
	var err error
	if rc := C.MPI_Comm_free(&w.comm); rc != C.MPI_SUCCESS {
		err = newError("MPI_Comm_free", rc)
	}
	if rc := C.MPI_Finalize(); rc != C.MPI_SUCCESS && err == nil {
		err = newError("MPI_Finalize", rc)
	}
	w.done <- err
	close(w.done)
}

// init runs MPI_Init_thread and sets up w's communicator. If MPI was
// initialized but the rest fails, it finalizes MPI again, so that the
// process can still exit cleanly under mpirun.
func (w *World) init() (err error) {
	var provided C.int
	if rc := C.gt_init(&provided); rc != C.MPI_SUCCESS {
		return newError("MPI_Init_thread", rc)
	}
	defer func() {
		if err != nil {
			C.MPI_Finalize()
		}
	}()
	if provided < C.MPI_THREAD_SERIALIZED {
		return fmt.Errorf("MPI_Init_thread granted thread level %d, want at least MPI_THREAD_SERIALIZED (%d): calls come from more than one OS thread", provided, C.MPI_THREAD_SERIALIZED)
	}
	world := C.gt_comm_world()
	if rc := C.gt_errors_return(world); rc != C.MPI_SUCCESS {
		return newError("MPI_Comm_set_errhandler", rc)
	}
	// A communicator of our own, so that no other user of MPI_COMM_WORLD
	// in the process can match our collectives. It inherits
	// MPI_ERRORS_RETURN; set it again rather than rely on that.
	w.comm = C.gt_comm_null()
	if rc := C.MPI_Comm_dup(world, &w.comm); rc != C.MPI_SUCCESS {
		return newError("MPI_Comm_dup", rc)
	}
	if rc := C.gt_errors_return(w.comm); rc != C.MPI_SUCCESS {
		return newError("MPI_Comm_set_errhandler", rc)
	}
	var rank, size C.int
	if rc := C.MPI_Comm_rank(w.comm, &rank); rc != C.MPI_SUCCESS {
		return newError("MPI_Comm_rank", rc)
	}
	if rc := C.MPI_Comm_size(w.comm, &size); rc != C.MPI_SUCCESS {
		return newError("MPI_Comm_size", rc)
	}
	w.rank, w.size = int(rank), int(size)
	return nil
}

// Finalize frees the world's communicator and calls MPI_Finalize, which
// every rank must call. After it the World must not be used, and MPI
// cannot be initialized again in this process; a second Finalize returns
// an error wrapping [ErrFinalized].
func (w *World) Finalize() error {
	mu.Lock()
	defer mu.Unlock()
	if mu.finalized {
		return fmt.Errorf("mpi: Finalize: %w", ErrFinalized)
	}
	mu.finalized = true
	w.finalized.Store(true)
	close(w.stop)
	if err := <-w.done; err != nil {
		return fmt.Errorf("mpi: Finalize: %w", err)
	}
	return nil
}

// Rank returns this process's rank in [0, Size).
func (w *World) Rank() int { return w.rank }

// Size returns the number of ranks.
func (w *World) Size() int { return w.size }

// AllReduceF32 replaces buf, which must have the same length on every
// rank, with the element-wise sum over ranks (MPI_Allreduce, MPI_IN_PLACE,
// MPI_SUM); every rank gets the same bits. It does not allocate.
func (w *World) AllReduceF32(buf []float32) error { return allReduce(w, "AllReduceF32", buf) }

// AllReduceF64 is AllReduceF32 for float64.
func (w *World) AllReduceF64(buf []float64) error { return allReduce(w, "AllReduceF64", buf) }

func allReduce[T float32 | float64](w *World, op string, buf []T) error {
	n, err := w.count(op, len(buf))
	if err != nil {
		return err
	}
	var f64 C.int
	if unsafe.Sizeof(T(0)) == 8 {
		f64 = 1
	}
	if rc := C.gt_allreduce_sum(unsafe.Pointer(unsafe.SliceData(buf)), n, f64, w.comm); rc != C.MPI_SUCCESS {
		return fmt.Errorf("mpi: %s of %d elements: %w", op, n, newError("MPI_Allreduce", rc))
	}
	return nil
}

// AllGather returns every rank's local slice, in rank order; the lengths
// may differ between ranks, and may be 0. The slices share one new array;
// each has its length as its capacity.
func (w *World) AllGather(local []float64) ([][]float64, error) {
	n, err := w.count("AllGather", len(local))
	if err != nil {
		return nil, err
	}
	counts := make([]C.int, w.size)
	if rc := C.gt_allgather_int(&n, unsafe.SliceData(counts), w.comm); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: AllGather of %d elements: lengths: %w", n, newError("MPI_Allgather", rc))
	}
	displs := make([]C.int, w.size)
	total := 0
	for r, c := range counts {
		displs[r] = C.int(total)
		total += int(c)
		if total > math.MaxInt32 {
			// Every rank sees the same counts, so every rank stops here.
			return nil, fmt.Errorf("mpi: AllGather: %d elements in all through rank %d, more than MPI's int count allows", total, r)
		}
	}
	all := make([]float64, total)
	send := (*C.double)(unsafe.Pointer(unsafe.SliceData(local)))
	recv := (*C.double)(unsafe.Pointer(unsafe.SliceData(all)))
	if rc := C.gt_allgatherv_f64(send, n, recv, unsafe.SliceData(counts), unsafe.SliceData(displs), w.comm); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: AllGather of %d elements: %w", n, newError("MPI_Allgatherv", rc))
	}
	out := make([][]float64, w.size)
	for r, c := range counts {
		d := int(displs[r])
		out[r] = all[d : d+int(c) : d+int(c)]
	}
	return out, nil
}

// bcastChunk is the most bytes one MPI_Bcast carries: MPI counts are C ints.
const bcastChunk = 1 << 30

// Broadcast returns root's buf on every rank; the others' buf is ignored.
// Root sends the length first, then the bytes. On root the result is buf
// itself; on the others it is a new slice, empty but not nil when root's
// buf is empty.
func (w *World) Broadcast(buf []byte, root int) ([]byte, error) {
	if w.finalized.Load() {
		return nil, fmt.Errorf("mpi: Broadcast: %w", ErrFinalized)
	}
	var n C.int64_t
	if w.rank == root {
		n = C.int64_t(len(buf))
	}
	// MPI checks root: it returns MPI_ERR_ROOT on every rank alike.
	if rc := C.gt_bcast_int64(&n, C.int(root), w.comm); rc != C.MPI_SUCCESS {
		return nil, fmt.Errorf("mpi: Broadcast from root %d of %d ranks: length: %w", root, w.size, newError("MPI_Bcast", rc))
	}
	out := buf
	if w.rank != root {
		out = make([]byte, n)
	}
	for off := 0; off < len(out); off += bcastChunk {
		chunk := out[off:min(off+bcastChunk, len(out))]
		if rc := C.gt_bcast_bytes(unsafe.Pointer(unsafe.SliceData(chunk)), C.int(len(chunk)), C.int(root), w.comm); rc != C.MPI_SUCCESS {
			return nil, fmt.Errorf("mpi: Broadcast of %d bytes from root %d: %w", n, root, newError("MPI_Bcast", rc))
		}
	}
	return out, nil
}

// count checks that w may still be used and that n fits MPI's int count.
func (w *World) count(op string, n int) (C.int, error) {
	if w.finalized.Load() {
		return 0, fmt.Errorf("mpi: %s: %w", op, ErrFinalized)
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("mpi: %s: %d elements, more than MPI's int count allows (%d)", op, n, math.MaxInt32)
	}
	return C.int(n), nil
}

// newError is the [*Error] for MPI's return code rc from call.
func newError(call string, rc C.int) *Error {
	var buf [C.gt_max_error_string]C.char
	var n C.int
	msg := fmt.Sprintf("MPI error %d", int(rc))
	if C.MPI_Error_string(rc, &buf[0], &n) == C.MPI_SUCCESS {
		msg = C.GoStringN(&buf[0], n)
	}
	return &Error{Call: call, Code: int(rc), Msg: msg}
}
