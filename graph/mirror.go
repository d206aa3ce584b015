package graph

import (
	"fmt"
	"sync/atomic"

	"github.com/gotrain/gotrain/gpu"
)

// Device mirrors of a Variable.
//
// A Variable's value lives on the host, on device mirrors, or both. A
// device Program reads a mirror of it on its device: a copy made on first
// use and refreshed whenever it is stale. Host writes through Assign and
// AdvanceCounter, and a call of F32 or F64 (whose slice may be written
// later), mark every mirror stale. A writer that keeps the slice from F32 or
// F64 across Runs calls Invalidate after writing.
//
// A device-side writer (an optimizer update on the device) writes through
// the Ptr from Mirror and then either calls SyncFrom to copy its result
// back to the host, or calls SetDeviceNewer with every device whose copy it
// wrote (each with the same values): then the host copy is stale, and the
// first host read (Value, F32, F64, AdvanceCounter, a CPU Program's Run, a
// mirror refreshed on another device) copies it from one of those devices,
// once.
//
// The rule for concurrency: that lazy copy writes the host storage, so, as
// for any write, no device-side writer may write v's mirrors while a host
// read of v runs: host reads happen between the updates, as they happen
// between Runs. Device Programs only read mirrors, so a host read may run
// while they run; concurrent host reads are serialized by v's lock, and
// once one has copied the host is current again and the others copy
// nothing.

// hostStaleVars counts the variables whose host copy is stale, so that a
// CPU Program's Run pays one atomic load when there are none.
var hostStaleVars atomic.Int64

// hostSyncs counts the copies from a device mirror to the host.
var hostSyncs atomic.Int64

// HostSyncs returns the number of copies of a variable from a device mirror
// to the host made so far in this process (by SyncFrom and by host reads of
// variables whose device copy was newer), for tests and monitoring.
func HostSyncs() int64 { return hostSyncs.Load() }

// mirror is a Variable's copy on one device. Its fields are guarded by the
// Variable's mirrors.mu.
type mirror struct {
	dev    *gpu.Device
	stream *gpu.Stream // uploads and syncs; immutable
	ptr    gpu.Ptr     // the copy, v.Len() elements; immutable, freed never
	valid  bool        // the copy holds the variable's value
}

// Mirror returns the address of v's copy on dev, allocating it on first
// use and copying the variable's value into it when it changed since (from
// the host, which is first copied from a device whose copy is newer). The
// address stays the same for v's life. The copy is complete when Mirror
// returns, so any stream on dev may read it.
//
// Writes through the address change the copy only: call SyncFrom or
// SetDeviceNewer to make them the variable's value.
func (v *Variable) Mirror(dev *gpu.Device) (gpu.Ptr, error) {
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	m, err := v.mirrorLocked(dev)
	if err != nil {
		return 0, err
	}
	if !m.valid {
		if err := v.syncHostLocked(); err != nil {
			return 0, err
		}
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
	if m := v.findLocked(dev); m != nil {
		return m, nil
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

// findLocked returns v's mirror on dev, or nil.
func (v *Variable) findLocked(dev *gpu.Device) *mirror {
	for _, m := range v.mirrors.list {
		if m.dev == dev {
			return m
		}
	}
	return nil
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

// downloadLocked copies m to the host.
func (v *Variable) downloadLocked(m *mirror, op string) error {
	var err error
	if v.dt == Float32 {
		err = gpu.CopyDtoH(m.stream, v.f32, m.ptr)
	} else {
		err = gpu.CopyDtoH(m.stream, v.f64, m.ptr)
	}
	if err != nil {
		return v.mirrorErr(op, fmt.Sprintf("copy from %v: %v", m.dev, err), err)
	}
	hostSyncs.Add(1)
	return nil
}

// syncHostLocked copies the value to the host from the first current
// mirror if the host copy is stale. On error the host stays stale.
func (v *Variable) syncHostLocked() error {
	if !v.mirrors.hostStale {
		return nil
	}
	for _, m := range v.mirrors.list {
		if m.valid {
			if err := v.downloadLocked(m, "sync"); err != nil {
				return err
			}
			v.setHostCurrentLocked()
			return nil
		}
	}
	// SetDeviceNewer keeps a current mirror while the host is stale.
	panic("graph: variable " + quote(v.name) + ": host copy stale with no current mirror")
}

func (v *Variable) setHostCurrentLocked() {
	if v.mirrors.hostStale {
		v.mirrors.hostStale = false
		hostStaleVars.Add(-1)
	}
}

// SyncFrom copies v's mirror on dev to the host, making it v's value: the
// mirrors on other devices become stale (refreshed at their next use) and
// dev's stays current. The work that wrote the mirror must have finished
// (Program.Run's work has, once Value or Scalar returned or the program's
// stream was synchronized). It returns an error if v has no mirror on dev.
func (v *Variable) SyncFrom(dev *gpu.Device) error {
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	m := v.findLocked(dev)
	if m == nil {
		return v.mirrorErr("sync", fmt.Sprintf("no mirror on %v", dev), ErrGraph)
	}
	if err := v.downloadLocked(m, "sync"); err != nil {
		return err
	}
	v.setHostCurrentLocked()
	for _, x := range v.mirrors.list {
		x.valid = x == m
	}
	return nil
}

// SetDeviceNewer makes v's mirrors on devs, which must hold the same
// values, v's value without a copy: the other mirrors and the host copy
// become stale, and the host copy is copied from one of devs at the first
// host read (see the rule for concurrency above). The work that wrote the
// mirrors must have finished. It returns an error, changing nothing, if devs
// is empty or v has no mirror on one of them.
func (v *Variable) SetDeviceNewer(devs ...*gpu.Device) error {
	if len(devs) == 0 {
		return v.mirrorErr("set device newer", "want a device, got none", ErrGraph)
	}
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	for _, d := range devs {
		if v.findLocked(d) == nil {
			return v.mirrorErr("set device newer", fmt.Sprintf("no mirror on %v", d), ErrGraph)
		}
	}
	for _, m := range v.mirrors.list {
		m.valid = false
		for _, d := range devs {
			if m.dev == d {
				m.valid = true
			}
		}
	}
	if !v.mirrors.hostStale {
		v.mirrors.hostStale = true
		hostStaleVars.Add(1)
	}
	return nil
}

// HostCurrent reports whether v's host copy holds its value, that is
// whether a host read would copy nothing from a device.
func (v *Variable) HostCurrent() bool {
	if !v.mirrors.any.Load() {
		return true
	}
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	return !v.mirrors.hostStale
}

// hostRead makes the host copy current before a host read. Without mirrors
// it costs one atomic load. It panics with an *Error if the copy fails.
func (v *Variable) hostRead() {
	if !v.mirrors.any.Load() {
		return
	}
	v.mirrors.Lock()
	err := v.syncHostLocked()
	v.mirrors.Unlock()
	if err != nil {
		panic(err)
	}
}

// hostWrite makes the host copy current and marks every mirror stale,
// before a host write that may keep some of the old values. Without
// mirrors it costs one atomic load. It panics with an *Error if the copy
// fails.
func (v *Variable) hostWrite() {
	if !v.mirrors.any.Load() {
		return
	}
	v.mirrors.Lock()
	defer v.mirrors.Unlock()
	if err := v.syncHostLocked(); err != nil {
		panic(err)
	}
	v.invalidateLocked()
}

// Invalidate marks every device mirror of v stale, so that each is copied
// from the host at its next use. Call it after writing v's storage through
// a slice kept from F32 or F64. While a device copy is newer than the host
// (SetDeviceNewer, no host read since), the host copy is not v's value and
// Invalidate changes nothing.
func (v *Variable) Invalidate() {
	if !v.mirrors.any.Load() {
		return // no mirror: the CPU path pays one atomic load
	}
	v.mirrors.Lock()
	if !v.mirrors.hostStale {
		v.invalidateLocked()
	}
	v.mirrors.Unlock()
}

// hostAssign makes the host copy v's value and marks every mirror stale,
// before a host write of every element (Assign): nothing is copied.
func (v *Variable) hostAssign() {
	if !v.mirrors.any.Load() {
		return
	}
	v.mirrors.Lock()
	v.setHostCurrentLocked()
	v.invalidateLocked()
	v.mirrors.Unlock()
}

func (v *Variable) invalidateLocked() {
	for _, m := range v.mirrors.list {
		m.valid = false
	}
}

func (v *Variable) mirrorErr(op, msg string, kind error) *Error {
	return &Error{Op: op + " " + quote(v.name), Msg: msg, Err: kind}
}
