package graph

import (
	"fmt"

	"github.com/gotrain/gotrain/gpu"
)

// Device mirrors of a Variable (design-next §3.5, issue 13).
//
// A Variable's host storage is the source of truth between Runs. A device
// Program reads a mirror of it on its device: a copy made on first use and
// refreshed from the host whenever it is stale. Host writes through Assign
// and AdvanceCounter, and a call of F32 or F64 (whose slice may be written
// later), mark every mirror stale. A writer that keeps the slice from F32 or
// F64 across Runs calls Invalidate after writing. A device-side writer (an
// optimizer update on the device) writes through the Ptr from Mirror and
// then calls SyncFrom to copy its result back to the host.

// mirror is a Variable's copy on one device. Its fields are guarded by the
// Variable's mirrors.mu.
type mirror struct {
	dev    *gpu.Device
	stream *gpu.Stream // uploads and syncs; immutable
	ptr    gpu.Ptr     // the copy, v.Len() elements; immutable, freed never
	valid  bool        // the copy holds the host's values
}

// Mirror returns the address of v's copy on dev, allocating it on first
// use and copying the host's values into it when they changed since. The
// address stays the same for v's life. The copy is complete when Mirror
// returns, so any stream on dev may read it.
//
// Writes through the address change the copy only: call SyncFrom to make
// them the variable's value.
func (v *Variable) Mirror(dev *gpu.Device) (gpu.Ptr, error) {
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	m, err := v.mirrorLocked(dev)
	if err != nil {
		return 0, err
	}
	if !m.valid {
		if err := v.uploadLocked(m); err != nil {
			return 0, err
		}
	}
	return m.ptr, nil
}

// mirrorLocked returns v's mirror on dev, allocating it if there is none.
func (v *Variable) mirrorLocked(dev *gpu.Device) (*mirror, error) {
	if dev == nil {
		return nil, v.mirrorErr("mirror", "want a device, got nil", ErrGraph)
	}
	for _, m := range v.mirrors.list {
		if m.dev == dev {
			return m, nil
		}
	}
	s, err := dev.NewStream()
	if err != nil {
		return nil, v.mirrorErr("mirror", fmt.Sprintf("stream on %v: %v", dev, err), err)
	}
	ptr, err := dev.Alloc(v.Len() * v.dt.size())
	if err != nil {
		s.Destroy()
		return nil, v.mirrorErr("mirror", fmt.Sprintf("%d bytes on %v: %v", v.Len()*v.dt.size(), dev, err), err)
	}
	m := &mirror{dev: dev, stream: s, ptr: ptr}
	v.mirrors.list = append(v.mirrors.list, m)
	v.mirrors.any.Store(true)
	return m, nil
}

func (v *Variable) uploadLocked(m *mirror) error {
	var err error
	if v.dt == Float32 {
		err = gpu.CopyHtoD(m.stream, m.ptr, v.f32)
	} else {
		err = gpu.CopyHtoD(m.stream, m.ptr, v.f64)
	}
	if err == nil {
		// Other streams read the copy next: it must be complete.
		err = m.stream.Synchronize()
	}
	if err != nil {
		return v.mirrorErr("mirror", fmt.Sprintf("copy to %v: %v", m.dev, err), err)
	}
	m.valid = true
	return nil
}

// SyncFrom copies v's mirror on dev to the host, making it v's value: the
// mirrors on other devices become stale (refreshed at their next use) and
// dev's stays current. The work that wrote the mirror must have finished
// (Program.Run's work has, once Value or Scalar returned or the program's
// stream was synchronized). It returns an error if v has no mirror on dev.
func (v *Variable) SyncFrom(dev *gpu.Device) error {
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	var m *mirror
	for _, x := range v.mirrors.list {
		if x.dev == dev {
			m = x
		}
	}
	if m == nil {
		return v.mirrorErr("sync", fmt.Sprintf("no mirror on %v", dev), ErrGraph)
	}
	var err error
	if v.dt == Float32 {
		err = gpu.CopyDtoH(m.stream, v.f32, m.ptr)
	} else {
		err = gpu.CopyDtoH(m.stream, v.f64, m.ptr)
	}
	if err != nil {
		return v.mirrorErr("sync", fmt.Sprintf("copy from %v: %v", dev, err), err)
	}
	for _, x := range v.mirrors.list {
		x.valid = x == m
	}
	return nil
}

// Invalidate marks every device mirror of v stale, so that each is copied
// from the host at its next use. Call it after writing v's storage through
// a slice kept from F32 or F64.
func (v *Variable) Invalidate() {
	if !v.mirrors.any.Load() {
		return // no mirror: the CPU path pays one atomic load
	}
	v.mirrors.Lock()
	for _, m := range v.mirrors.list {
		m.valid = false
	}
	v.mirrors.Unlock()
}

func (v *Variable) mirrorErr(op, msg string, kind error) *Error {
	return &Error{Op: op + " " + quote(v.name), Msg: msg, Err: kind}
}
