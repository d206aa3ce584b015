package gpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Ptr is a device address (CUdeviceptr). The zero Ptr is no allocation.
type Ptr uintptr

// Add returns p advanced by bytes.
func (p Ptr) Add(bytes int) Ptr { return p + Ptr(bytes) }

// Elem is an element type that copies and collectives move.
type Elem interface{ ~float32 | ~float64 | ~int32 }

// driver holds libcuda's entry points, set once by Init. Versioned names
// (cuMemAlloc_v2, ...) are resolved explicitly: the unversioned symbols are
// the legacy ABI.
var driver struct {
	once sync.Once
	err  error // Init's outcome; immutable after once
	lib  *library

	cuInit, cuDriverGetVersion, cuGetErrorName, cuGetErrorString          uintptr
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute  uintptr
	cuDeviceTotalMem, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease uintptr
	cuCtxSetCurrent, cuCtxGetCurrent, cuMemGetInfo                        uintptr
	cuMemAlloc, cuMemFree, cuMemcpyHtoDAsync, cuMemcpyDtoHAsync           uintptr
	cuMemcpyDtoDAsync, cuMemsetD32Async                                   uintptr
	cuStreamCreate, cuStreamSynchronize, cuStreamDestroy                  uintptr
	cuModuleLoadData, cuModuleUnload, cuModuleGetFunction, cuLaunchKernel uintptr
}

// Init loads the CUDA driver (libcuda.so.1, or the path in GOTRAIN_LIBCUDA)
// and calls cuInit. Only the first call does work; later calls return its
// result. Every other entry point calls Init itself.
func Init() error {
	driver.once.Do(func() { driver.err = initDriver() })
	return driver.err
}

func initDriver() error {
	lib, err := openLibrary("GOTRAIN_LIBCUDA", "libcuda.so.1")
	if err != nil {
		return err
	}
	d := &driver
	err = lib.bind([]symbol{
		{fn: &d.cuInit, name: "cuInit"},
		{fn: &d.cuDriverGetVersion, name: "cuDriverGetVersion"},
		{fn: &d.cuGetErrorName, name: "cuGetErrorName"},
		{fn: &d.cuGetErrorString, name: "cuGetErrorString"},
		{fn: &d.cuDeviceGetCount, name: "cuDeviceGetCount"},
		{fn: &d.cuDeviceGet, name: "cuDeviceGet"},
		{fn: &d.cuDeviceGetName, name: "cuDeviceGetName"},
		{fn: &d.cuDeviceGetAttribute, name: "cuDeviceGetAttribute"},
		{fn: &d.cuDeviceTotalMem, name: "cuDeviceTotalMem_v2"},
		{fn: &d.cuDevicePrimaryCtxRetain, name: "cuDevicePrimaryCtxRetain"},
		{fn: &d.cuDevicePrimaryCtxRelease, name: "cuDevicePrimaryCtxRelease_v2"},
		{fn: &d.cuCtxSetCurrent, name: "cuCtxSetCurrent"},
		{fn: &d.cuCtxGetCurrent, name: "cuCtxGetCurrent"},
		{fn: &d.cuMemGetInfo, name: "cuMemGetInfo_v2"},
		{fn: &d.cuMemAlloc, name: "cuMemAlloc_v2"},
		{fn: &d.cuMemFree, name: "cuMemFree_v2"},
		{fn: &d.cuMemcpyHtoDAsync, name: "cuMemcpyHtoDAsync_v2"},
		{fn: &d.cuMemcpyDtoHAsync, name: "cuMemcpyDtoHAsync_v2"},
		{fn: &d.cuMemcpyDtoDAsync, name: "cuMemcpyDtoDAsync_v2"},
		{fn: &d.cuMemsetD32Async, name: "cuMemsetD32Async"},
		{fn: &d.cuStreamCreate, name: "cuStreamCreate"},
		{fn: &d.cuStreamSynchronize, name: "cuStreamSynchronize"},
		{fn: &d.cuStreamDestroy, name: "cuStreamDestroy_v2"},
		{fn: &d.cuModuleLoadData, name: "cuModuleLoadData"},
		{fn: &d.cuModuleUnload, name: "cuModuleUnload"},
		{fn: &d.cuModuleGetFunction, name: "cuModuleGetFunction"},
		{fn: &d.cuLaunchKernel, name: "cuLaunchKernel"},
	})
	if err != nil {
		return err
	}
	d.lib = lib
	return cuCheck(call(d.cuInit, 0), -1, "cuInit")
}

// cuCheck turns a CUresult into an *Error naming call on device dev (-1:
// none), or nil for CUDA_SUCCESS.
func cuCheck(r uintptr, dev int, what string, args ...any) error {
	if r == 0 {
		return nil
	}
	if len(args) > 0 {
		what = fmt.Sprintf(what, args...)
	}
	e := &Error{Call: what, Device: dev, Code: int(int32(r))}
	var name, msg uintptr
	if driver.cuGetErrorName == 0 || call(driver.cuGetErrorName, r, uintptr(unsafe.Pointer(&name))) != 0 {
		e.Name = fmt.Sprintf("CUresult(%d)", e.Code)
	} else {
		e.Name = cstring(name)
	}
	if driver.cuGetErrorString != 0 && call(driver.cuGetErrorString, r, uintptr(unsafe.Pointer(&msg))) == 0 {
		e.Msg = cstring(msg)
	}
	return e
}

// Count returns the number of CUDA devices.
func Count() (int, error) { return driverInt(&driver.cuDeviceGetCount, "cuDeviceGetCount") }

// DriverVersion returns the CUDA version the driver supports, as
// 1000*major + 10*minor (13000 for CUDA 13.0).
func DriverVersion() (int, error) { return driverInt(&driver.cuDriverGetVersion, "cuDriverGetVersion") }

// driverInt calls Init, then the driver function *fn (named name), whose
// one argument is an int32 it sets, and returns that number. fn is a
// pointer because Init sets the entry points.
func driverInt(fn *uintptr, name string) (int, error) {
	if err := Init(); err != nil {
		return 0, err
	}
	var v int32
	if err := cuCheck(call(*fn, uintptr(unsafe.Pointer(&v))), -1, name); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Device is one GPU and its primary context, the context that cuBLAS and
// NCCL also use. A Device is safe for concurrent use; each method makes the
// device's context current on the calling OS thread for its duration, so
// that goroutines need not stay on one thread to call it. It must not be
// used after Close.
type Device struct {
	ordinal int     // immutable
	dev     int32   // CUdevice; immutable
	ctx     uintptr // CUcontext of the retained primary context; immutable
	name    string  // immutable
	major   int     // compute capability; immutable
	minor   int

	// mods is the device's one cache of compiled modules (Module): every
	// package that launches kernels on d shares it, so a source is compiled
	// once per device whoever asks.
	mods struct {
		sync.Mutex
		m map[moduleKey]*moduleEntry // entries are removed only by Close
	}
	compiles atomic.Int64 // Module's successful compiles, for Compiles
}

// CUdevice_attribute values Open reads.
const (
	attrMultiprocessorCount = 16
	attrComputeMajor        = 75
	attrComputeMinor        = 76
)

// Open retains device i's primary context. Close releases it.
func Open(i int) (*Device, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	d := &Device{ordinal: i}
	if err := cuCheck(call(driver.cuDeviceGet, uintptr(unsafe.Pointer(&d.dev)), uintptr(i)), i, "cuDeviceGet"); err != nil {
		return nil, err
	}
	var name [256]byte
	if err := cuCheck(call(driver.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)-1), uintptr(d.dev)), i, "cuDeviceGetName"); err != nil {
		return nil, err
	}
	d.name = cstring(uintptr(unsafe.Pointer(&name[0])))
	var err error
	if d.major, err = d.attribute(attrComputeMajor); err != nil {
		return nil, err
	}
	if d.minor, err = d.attribute(attrComputeMinor); err != nil {
		return nil, err
	}
	if err := cuCheck(call(driver.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.dev)), i, "cuDevicePrimaryCtxRetain"); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Device) attribute(attr int) (int, error) {
	var v int32
	err := cuCheck(call(driver.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(d.dev)), d.ordinal, "cuDeviceGetAttribute(%d)", attr)
	return int(v), err
}

// Close unloads the modules of d's cache (Module) and releases the primary
// context that Open retained; it returns the first error.
func (d *Device) Close() error {
	err := d.unloadModules()
	if e := cuCheck(call(driver.cuDevicePrimaryCtxRelease, uintptr(d.dev)), d.ordinal, "cuDevicePrimaryCtxRelease_v2"); err == nil {
		err = e
	}
	return err
}

// Ordinal returns the device's index, as given to Open.
func (d *Device) Ordinal() int { return d.ordinal }

// Name returns the device's name, as "NVIDIA H200".
func (d *Device) Name() string { return d.name }

// ComputeCapability returns the device's compute capability, as 9, 0.
func (d *Device) ComputeCapability() (major, minor int) { return d.major, d.minor }

// String returns "gpu:N".
func (d *Device) String() string { return fmt.Sprintf("gpu:%d", d.ordinal) }

// Bind makes d's context current on the calling OS thread. The caller
// holds the thread with runtime.LockOSThread; a replica's goroutine binds
// once, after which d's methods find the context already current.
func (d *Device) Bind() error {
	return cuCheck(call(driver.cuCtxSetCurrent, d.ctx), d.ordinal, "cuCtxSetCurrent")
}

// enter locks the goroutine to its thread and makes d's context current,
// returning the unlock. Nested locks count, so a caller's own
// LockOSThread stays in force.
func (d *Device) enter() (func(), error) {
	runtime.LockOSThread()
	var cur uintptr
	if err := cuCheck(call(driver.cuCtxGetCurrent, uintptr(unsafe.Pointer(&cur))), d.ordinal, "cuCtxGetCurrent"); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	if cur != d.ctx {
		if err := d.Bind(); err != nil {
			runtime.UnlockOSThread()
			return nil, err
		}
	}
	return runtime.UnlockOSThread, nil
}

// MemInfo returns the device's free and total memory in bytes.
func (d *Device) MemInfo() (free, total int, err error) {
	leave, err := d.enter()
	if err != nil {
		return 0, 0, err
	}
	defer leave()
	var f, t uint64
	err = cuCheck(call(driver.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))), d.ordinal, "cuMemGetInfo_v2")
	return int(f), int(t), err
}

// Alloc allocates bytes of device memory, uninitialised. Alloc(0) returns
// the zero Ptr. It panics if bytes is negative.
func (d *Device) Alloc(bytes int) (Ptr, error) {
	if bytes < 0 {
		panic(fmt.Sprintf("gpu: Alloc of %d bytes", bytes))
	}
	if bytes == 0 {
		return 0, nil
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	var p Ptr
	if err := cuCheck(call(driver.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes)), d.ordinal, "cuMemAlloc_v2(%d bytes)", bytes); err != nil {
		return 0, err
	}
	return p, nil
}

// Free frees memory from Alloc. Free of the zero Ptr does nothing.
func (d *Device) Free(p Ptr) error {
	if p == 0 {
		return nil
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuMemFree, uintptr(p)), d.ordinal, "cuMemFree_v2(%#x)", uintptr(p))
}

// Stream is a CUDA stream: work on one stream runs in the order it was
// enqueued. A Stream is not safe for concurrent use; it must not be used
// after Destroy.
type Stream struct {
	dev *Device // immutable
	h   uintptr // CUstream; immutable
}

// NewStream creates a stream on d.
func (d *Device) NewStream() (*Stream, error) {
	leave, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	s := &Stream{dev: d}
	if err := cuCheck(call(driver.cuStreamCreate, uintptr(unsafe.Pointer(&s.h)), 0), d.ordinal, "cuStreamCreate"); err != nil {
		return nil, err
	}
	return s, nil
}

// Device returns the stream's device.
func (s *Stream) Device() *Device { return s.dev }

// Synchronize waits until all work enqueued on s has finished.
func (s *Stream) Synchronize() error {
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuStreamSynchronize, s.h), s.dev.ordinal, "cuStreamSynchronize")
}

// Destroy destroys s once its work has finished.
func (s *Stream) Destroy() error {
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuStreamDestroy, s.h), s.dev.ordinal, "cuStreamDestroy_v2")
}

// Memset32 enqueues setting n 32-bit words at dst to v on s (0 and
// math.Float32bits(x) fill float32 buffers).
func (s *Stream) Memset32(dst Ptr, v uint32, n int) error {
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuMemsetD32Async, uintptr(dst), uintptr(v), uintptr(n), s.h), s.dev.ordinal, "cuMemsetD32Async(%d words)", n)
}

// CopyDtoD enqueues a copy of bytes from src to dst, both on s's device.
func (s *Stream) CopyDtoD(dst, src Ptr, bytes int) error {
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), s.h), s.dev.ordinal, "cuMemcpyDtoDAsync_v2(%d bytes)", bytes)
}

// CopyHtoD copies src to dst on s. It returns once src may be reused (the
// driver stages pageable memory before it returns); the copy itself
// completes in s's order.
func CopyHtoD[T Elem](s *Stream, dst Ptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	n := len(src) * int(unsafe.Sizeof(src[0]))
	return cuCheck(call(driver.cuMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(n), s.h), s.dev.ordinal, "cuMemcpyHtoDAsync_v2(%d bytes)", n)
}

// CopyDtoH copies len(dst) elements from src into dst after the work
// enqueued on s before it, and returns when dst holds them.
func CopyDtoH[T Elem](s *Stream, dst []T, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	n := len(dst) * int(unsafe.Sizeof(dst[0]))
	if err := cuCheck(call(driver.cuMemcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(n), s.h), s.dev.ordinal, "cuMemcpyDtoHAsync_v2(%d bytes)", n); err != nil {
		return err
	}
	return cuCheck(call(driver.cuStreamSynchronize, s.h), s.dev.ordinal, "cuStreamSynchronize")
}
