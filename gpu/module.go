package gpu

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// nvrtc holds NVRTC's entry points, loaded at the first Compile.
var nvrtc struct {
	once sync.Once
	err  error // the load's outcome; immutable after once

	nvrtcCreateProgram, nvrtcDestroyProgram, nvrtcCompileProgram uintptr
	nvrtcGetPTXSize, nvrtcGetPTX, nvrtcGetProgramLogSize         uintptr
	nvrtcGetProgramLog, nvrtcGetErrorString                      uintptr
	nvrtcGetNumSupportedArchs, nvrtcGetSupportedArchs            uintptr // optional
}

func loadNVRTC() error {
	nvrtc.once.Do(func() {
		lib, err := openLibrary("GOTRAIN_LIBNVRTC", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
		if err != nil {
			nvrtc.err = err
			return
		}
		n := &nvrtc
		nvrtc.err = lib.bind([]symbol{
			{fn: &n.nvrtcCreateProgram, name: "nvrtcCreateProgram"},
			{fn: &n.nvrtcDestroyProgram, name: "nvrtcDestroyProgram"},
			{fn: &n.nvrtcCompileProgram, name: "nvrtcCompileProgram"},
			{fn: &n.nvrtcGetPTXSize, name: "nvrtcGetPTXSize"},
			{fn: &n.nvrtcGetPTX, name: "nvrtcGetPTX"},
			{fn: &n.nvrtcGetProgramLogSize, name: "nvrtcGetProgramLogSize"},
			{fn: &n.nvrtcGetProgramLog, name: "nvrtcGetProgramLog"},
			{fn: &n.nvrtcGetErrorString, name: "nvrtcGetErrorString"},
			{fn: &n.nvrtcGetNumSupportedArchs, name: "nvrtcGetNumSupportedArchs", optional: true},
			{fn: &n.nvrtcGetSupportedArchs, name: "nvrtcGetSupportedArchs", optional: true},
		})
	})
	return nvrtc.err
}

// nvrtcCheck turns an nvrtcResult into an *Error, or nil for success.
func nvrtcCheck(r uintptr, dev int, what string) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: what, Device: dev, Code: int(int32(r))}
	e.Name = cstring(call(nvrtc.nvrtcGetErrorString, r))
	if e.Name == "" {
		e.Name = fmt.Sprintf("nvrtcResult(%d)", e.Code)
	}
	return e
}

// CompileOptions are the NVRTC options Compile passes besides the
// architecture: device code by default, no fused multiply-add contraction
// and IEEE division and square root, so that kernels round as the CPU
// kernels do.
var CompileOptions = []string{"-default-device", "--fmad=false", "-prec-div=true", "-prec-sqrt=true"}

// arch returns the virtual architecture to compile for: the device's own,
// or the newest NVRTC supports below it.
func (d *Device) arch() int {
	want := 10*d.major + d.minor
	if nvrtc.nvrtcGetNumSupportedArchs == 0 || nvrtc.nvrtcGetSupportedArchs == 0 {
		return want
	}
	var n int32
	if call(nvrtc.nvrtcGetNumSupportedArchs, uintptr(unsafe.Pointer(&n))) != 0 || n <= 0 {
		return want
	}
	archs := make([]int32, n)
	if call(nvrtc.nvrtcGetSupportedArchs, uintptr(unsafe.Pointer(&archs[0]))) != 0 {
		return want
	}
	best := 0
	for _, a := range archs {
		if int(a) <= want && int(a) > best {
			best = int(a)
		}
	}
	if best == 0 {
		return want
	}
	return best
}

// Compile compiles the kernel source src, after Prelude, through NVRTC for
// d's compute capability, and returns the PTX. name names the program in
// errors and logs (as "saxpy.cu"). A compile error is an *Error whose Log
// holds NVRTC's program log.
func (d *Device) Compile(name, src string) ([]byte, error) {
	if err := loadNVRTC(); err != nil {
		return nil, err
	}
	full := cbytes(Prelude + src)
	cname := cbytes(name)
	var prog uintptr
	if err := nvrtcCheck(call(nvrtc.nvrtcCreateProgram, uintptr(unsafe.Pointer(&prog)),
		uintptr(unsafe.Pointer(&full[0])), uintptr(unsafe.Pointer(&cname[0])), 0, 0, 0),
		d.ordinal, "nvrtcCreateProgram("+name+")"); err != nil {
		return nil, err
	}
	defer func() { call(nvrtc.nvrtcDestroyProgram, uintptr(unsafe.Pointer(&prog))) }()

	opts := append([]string{fmt.Sprintf("--gpu-architecture=compute_%d", d.arch())}, CompileOptions...)
	copts := make([][]byte, len(opts))
	argv := make([]*byte, len(opts))
	for i, o := range opts {
		copts[i] = cbytes(o)
		argv[i] = &copts[i][0]
	}
	r := call(nvrtc.nvrtcCompileProgram, prog, uintptr(len(argv)), uintptr(unsafe.Pointer(&argv[0])))
	runtime.KeepAlive(copts)
	if err := nvrtcCheck(r, d.ordinal, "nvrtcCompileProgram("+name+", "+strings.Join(opts, " ")+")"); err != nil {
		err.(*Error).Log = programLog(prog)
		return nil, err
	}
	var n uintptr
	if err := nvrtcCheck(call(nvrtc.nvrtcGetPTXSize, prog, uintptr(unsafe.Pointer(&n))), d.ordinal, "nvrtcGetPTXSize("+name+")"); err != nil {
		return nil, err
	}
	ptx := make([]byte, n)
	if n > 0 {
		if err := nvrtcCheck(call(nvrtc.nvrtcGetPTX, prog, uintptr(unsafe.Pointer(&ptx[0]))), d.ordinal, "nvrtcGetPTX("+name+")"); err != nil {
			return nil, err
		}
	}
	// NVRTC counts the terminating NUL; Load adds its own.
	for len(ptx) > 0 && ptx[len(ptx)-1] == 0 {
		ptx = ptx[:len(ptx)-1]
	}
	return ptx, nil
}

// programLog returns prog's compile log, trimmed.
func programLog(prog uintptr) string {
	var n uintptr
	if call(nvrtc.nvrtcGetProgramLogSize, prog, uintptr(unsafe.Pointer(&n))) != 0 || n == 0 {
		return ""
	}
	b := make([]byte, n)
	if call(nvrtc.nvrtcGetProgramLog, prog, uintptr(unsafe.Pointer(&b[0]))) != 0 {
		return ""
	}
	return strings.TrimRight(string(b), "\x00\n ")
}

// Module is PTX loaded into a device's context. It is safe for concurrent
// use and must not be used after Unload.
type Module struct {
	dev *Device // immutable
	h   uintptr // CUmodule; immutable
}

// Load loads PTX (from Compile) into d's context; the driver compiles it
// for d.
func (d *Device) Load(ptx []byte) (*Module, error) {
	leave, err := d.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	img := make([]byte, len(ptx)+1)
	copy(img, ptx)
	m := &Module{dev: d}
	if err := cuCheck(call(driver.cuModuleLoadData, uintptr(unsafe.Pointer(&m.h)), uintptr(unsafe.Pointer(&img[0]))), d.ordinal, "cuModuleLoadData(%d bytes)", len(ptx)); err != nil {
		return nil, err
	}
	return m, nil
}

// moduleKey names a module of a device's cache: its program name and
// source, as given to Module.
type moduleKey struct{ name, src string }

// moduleEntry is one cached module. Its mutex is held while the module
// compiles, so concurrent requests for one source wait for one compile
// while other sources compile alongside.
type moduleEntry struct {
	sync.Mutex
	mod *Module // nil until compiled and loaded; guarded by the mutex
}

// Module returns the module compiled from src (Compile) and loaded (Load)
// on d. The device owns one cache of compiled modules, by name and source:
// the first request for a source compiles and loads it, and every later one
// gets that module, whichever package asks. Concurrent requests for one
// source wait for one compile. A failure is returned and not kept, so a
// later request tries again. The modules stay loaded until Close; the
// caller must not Unload one.
func (d *Device) Module(name, src string) (*Module, error) {
	key := moduleKey{name, src}
	d.mods.Lock()
	e := d.mods.m[key]
	if e == nil {
		if d.mods.m == nil {
			d.mods.m = make(map[moduleKey]*moduleEntry)
		}
		e = new(moduleEntry)
		d.mods.m[key] = e
	}
	d.mods.Unlock()

	e.Lock()
	defer e.Unlock()
	if e.mod != nil {
		return e.mod, nil
	}
	ptx, err := d.Compile(name, src)
	if err != nil {
		return nil, err
	}
	mod, err := d.Load(ptx)
	if err != nil {
		return nil, err
	}
	e.mod = mod
	d.compiles.Add(1)
	return mod, nil
}

// Compiles returns how many modules Module has compiled on d, so that a
// test can check that a source is compiled once per device.
func (d *Device) Compiles() int { return int(d.compiles.Load()) }

// unloadModules unloads the modules of d's cache and empties it; it returns
// the first error.
func (d *Device) unloadModules() error {
	d.mods.Lock()
	defer d.mods.Unlock()
	var first error
	for _, e := range d.mods.m {
		e.Lock()
		if e.mod != nil {
			if err := e.mod.Unload(); err != nil && first == nil {
				first = err
			}
			e.mod = nil
		}
		e.Unlock()
	}
	d.mods.m = nil
	return first
}

// Unload unloads m; its Functions may no longer be launched.
func (m *Module) Unload() error {
	leave, err := m.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return cuCheck(call(driver.cuModuleUnload, m.h), m.dev.ordinal, "cuModuleUnload")
}

// Function is a kernel in a Module. It is safe for concurrent use.
type Function struct {
	mod  *Module // immutable
	name string  // immutable
	h    uintptr // CUfunction; immutable
}

// Function looks up the kernel name (declared KERNEL, so unmangled).
func (m *Module) Function(name string) (*Function, error) {
	leave, err := m.dev.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	f := &Function{mod: m, name: name}
	cname := cbytes(name)
	if err := cuCheck(call(driver.cuModuleGetFunction, uintptr(unsafe.Pointer(&f.h)), m.h, uintptr(unsafe.Pointer(&cname[0]))), m.dev.ordinal, "cuModuleGetFunction(%s)", name); err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// MaxParams is the most parameters a kernel may take: the fake driver
// calls kernels through a function type of this many long long parameters.
const MaxParams = 16

// Dim3 is a grid or block shape, x first.
type Dim3 = [3]uint32

// Linear returns a one-dimensional launch shape of block threads a block
// and enough blocks to cover n elements; the last block may run past n, so
// kernels test GLOBAL_INDEX < n. It panics if block is not positive.
func Linear(n, block int) (grid, blk Dim3) {
	if block <= 0 {
		panic(fmt.Sprintf("gpu: Linear with block %d", block))
	}
	g := max((n+block-1)/block, 1)
	return Dim3{uint32(g), 1, 1}, Dim3{uint32(block), 1, 1}
}

// Launch enqueues f on s over grid blocks of block threads. Each argument
// is a kernel parameter, by the package's convention a pointer (Ptr) or a
// 64-bit integer (int, int64, uint64: long long in the kernel). It panics
// on any other argument type (a floating-point scalar travels in a device
// buffer), on more than MaxParams arguments, or if s is on another device.
func (f *Function) Launch(s *Stream, grid, block Dim3, args ...any) error {
	if len(args) > MaxParams {
		panic(fmt.Sprintf("gpu: %s: %d kernel parameters, want at most %d", f.name, len(args), MaxParams))
	}
	if s.dev != f.mod.dev {
		panic(fmt.Sprintf("gpu: %s: launched on a stream of %s, loaded on %s", f.name, s.dev, f.mod.dev))
	}
	// vals holds the parameters' values, ptrs their addresses: the
	// kernelParams array cuLaunchKernel reads.
	var vals [MaxParams]uint64
	var ptrs [MaxParams]unsafe.Pointer
	for i, a := range args {
		switch v := a.(type) {
		case Ptr:
			vals[i] = uint64(v)
		case int:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		default:
			panic(fmt.Sprintf("gpu: %s: parameter %d is %T, want Ptr or a 64-bit integer (floating-point scalars go in a device buffer)", f.name, i, a))
		}
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	leave, err := s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	// The conversion stays in the call expression, so that call's
	// uintptrescapes keeps ptrs (and the vals it points to) on the heap.
	r := call(driver.cuLaunchKernel, f.h,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		0, s.h, uintptr(unsafe.Pointer(&ptrs[0])), 0)
	return cuCheck(r, s.dev.ordinal, "cuLaunchKernel(%s, grid %v, block %v)", f.name, grid, block)
}
