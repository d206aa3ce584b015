package gpu

import (
	"fmt"
	"sync"
	"unsafe"
)

// nccl holds NCCL's entry points, loaded at the first Available or
// CommInitAll.
var nccl struct {
	once sync.Once
	err  error // the load's outcome; immutable after once

	ncclCommInitAll, ncclCommDestroy, ncclAllReduce  uintptr
	ncclGroupStart, ncclGroupEnd, ncclGetErrorString uintptr
}

func loadNCCL() error {
	nccl.once.Do(func() {
		if err := Init(); err != nil {
			nccl.err = err
			return
		}
		lib, err := openLibrary("GOTRAIN_LIBNCCL", "libnccl.so.2")
		if err != nil {
			nccl.err = fmt.Errorf("%w: %w", ErrNoNCCL, err)
			return
		}
		n := &nccl
		if err := lib.bind([]symbol{
			{fn: &n.ncclCommInitAll, name: "ncclCommInitAll"},
			{fn: &n.ncclCommDestroy, name: "ncclCommDestroy"},
			{fn: &n.ncclAllReduce, name: "ncclAllReduce"},
			{fn: &n.ncclGroupStart, name: "ncclGroupStart"},
			{fn: &n.ncclGroupEnd, name: "ncclGroupEnd"},
			{fn: &n.ncclGetErrorString, name: "ncclGetErrorString"},
		}); err != nil {
			nccl.err = fmt.Errorf("%w: %w", ErrNoNCCL, err)
		}
	})
	return nccl.err
}

// Available reports whether NCCL loaded (libnccl.so.2, or the path in
// GOTRAIN_LIBNCCL). Without it, callers reduce by copies between devices.
func Available() bool { return loadNCCL() == nil }

// ncclResultNames are ncclResult_t's names; NCCL has no call for them.
var ncclResultNames = []string{
	"ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
	"ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress",
}

func ncclCheck(r uintptr, dev int, what string, args ...any) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: fmt.Sprintf(what, args...), Device: dev, Code: int(int32(r))}
	if e.Code >= 0 && e.Code < len(ncclResultNames) {
		e.Name = ncclResultNames[e.Code]
	} else {
		e.Name = fmt.Sprintf("ncclResult_t(%d)", e.Code)
	}
	e.Msg = cstring(call(nccl.ncclGetErrorString, r))
	return e
}

// Comm is one device's rank in an NCCL communicator. It is not safe for
// concurrent use and must not be used after Destroy.
type Comm struct {
	dev  *Device // immutable
	rank int     // immutable
	h    uintptr // ncclComm_t; immutable
}

// CommInitAll makes one communicator over devs in this process, rank i on
// devs[i]. NCCL refuses a device listed twice (ncclInvalidUsage). It
// returns an error wrapping ErrNoNCCL when NCCL is not available.
func CommInitAll(devs []*Device) ([]*Comm, error) {
	if err := loadNCCL(); err != nil {
		return nil, err
	}
	if len(devs) == 0 {
		return nil, nil
	}
	ords := make([]int32, len(devs))
	for i, d := range devs {
		ords[i] = int32(d.ordinal)
	}
	hs := make([]uintptr, len(devs))
	if err := ncclCheck(call(nccl.ncclCommInitAll, uintptr(unsafe.Pointer(&hs[0])), uintptr(len(devs)), uintptr(unsafe.Pointer(&ords[0]))), -1, "ncclCommInitAll(%v)", ords); err != nil {
		return nil, err
	}
	comms := make([]*Comm, len(devs))
	for i, d := range devs {
		comms[i] = &Comm{dev: d, rank: i, h: hs[i]}
	}
	return comms, nil
}

// Rank returns c's rank.
func (c *Comm) Rank() int { return c.rank }

// Device returns c's device.
func (c *Comm) Device() *Device { return c.dev }

// Destroy frees c.
func (c *Comm) Destroy() error {
	return ncclCheck(call(nccl.ncclCommDestroy, c.h), c.dev.ordinal, "ncclCommDestroy")
}

// ncclType returns T's ncclDataType_t.
func ncclType[T Elem]() uintptr {
	var z T
	switch {
	case unsafe.Sizeof(z) == 8:
		return 8 // ncclFloat64
	case T(1)/T(2) == 0: // integer division: ~int32
		return 2 // ncclInt32
	}
	return 7 // ncclFloat32
}

// AllReduceSum enqueues, for each rank i, the element-wise sum over ranks
// of count elements at send[i] into recv[i] on streams[i] (send[i] ==
// recv[i] reduces in place), issued from this goroutine in one NCCL group.
// comms, streams, send and recv have one entry per rank of one
// communicator. It panics if their lengths differ or a stream is on
// another device than its rank.
func AllReduceSum[T Elem](comms []*Comm, streams []*Stream, send, recv []Ptr, count int) error {
	if len(streams) != len(comms) || len(send) != len(comms) || len(recv) != len(comms) {
		panic(fmt.Sprintf("gpu: AllReduceSum over %d comms with %d streams, %d send and %d recv buffers", len(comms), len(streams), len(send), len(recv)))
	}
	for i, c := range comms {
		if streams[i].dev != c.dev {
			panic(fmt.Sprintf("gpu: AllReduceSum: rank %d on %s with a stream on %s", i, c.dev, streams[i].dev))
		}
	}
	if err := ncclCheck(call(nccl.ncclGroupStart), -1, "ncclGroupStart"); err != nil {
		return err
	}
	dt := ncclType[T]()
	var first error
	for i, c := range comms {
		const sum = 0 // ncclSum
		r := call(nccl.ncclAllReduce, uintptr(send[i]), uintptr(recv[i]), uintptr(count), dt, sum, c.h, streams[i].h)
		if err := ncclCheck(r, c.dev.ordinal, "ncclAllReduce(rank %d, %d elements)", i, count); err != nil && first == nil {
			first = err
		}
	}
	if err := ncclCheck(call(nccl.ncclGroupEnd), -1, "ncclGroupEnd"); err != nil && first == nil {
		first = err
	}
	return first
}
