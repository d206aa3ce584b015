//go:build cuda

package loops

import (
	"fmt"
	"unsafe"

	"github.com/gotrain/gotrain/gpu"
)

// The device versions of the optimizer updates in optim.go. Each
// CPU kernel has a launcher of the same name with a Device suffix, the same
// hyperparameters in the same order and the same meaning, and a CUDA C
// source below whose loop body is the CPU loop's, expression for
// expression. The per-step constants (Adam's folded step size and ε̂, the
// rounded 1-β) are computed on the host by the same Go code as the CPU
// kernels use (newAdamConsts, newRMSpropConsts), so both sides start from
// the same bits; gpu.Compile's options forbid FMA contraction and ask for
// IEEE division and square root, so they end with the same bits as well
// (see the tests for what is checked).

// paramSlots is how many scalars a DeviceParams holds; the longest list,
// Adam's, has 7.
const paramSlots = 8

// blockSize is the threads per block of every optimizer launch.
const blockSize = 256

// DeviceParams is the small device buffer through which one launch site
// passes a step's hyperparameters to the optimizer kernels: by gpu's
// parameter convention a kernel takes no floating-point arguments, so each
// launch writes its scalars here with one host-to-device copy on the
// launch's stream, and the kernel reads them from there.
//
// A launch site (one optimizer's update of one device's variables, say)
// makes one DeviceParams with NewDeviceParams and reuses it every step; the
// launches on one stream may share it, since each copy runs after the
// kernels enqueued before it. A DeviceParams is not safe for concurrent use
// and must not be used on two streams at once; it must not be used after
// Free.
type DeviceParams struct {
	dev *gpu.Device // immutable; never nil
	buf gpu.Ptr     // paramSlots float64s of device memory; zero after Free

	// host stages a launch's scalars (float32 or float64) for the copy,
	// so that a launch allocates nothing for them.
	// TODO(issue 13): stage in pinned memory once package gpu binds
	// cuMemHostAlloc; from pageable memory the driver may wait for the
	// stream before each copy.
	host [paramSlots]float64
}

// NewDeviceParams allocates a DeviceParams on d. An allocation failure is
// returned, wrapping gpu.ErrOutOfMemory.
func NewDeviceParams(d *gpu.Device) (*DeviceParams, error) {
	buf, err := d.Alloc(paramSlots * 8)
	if err != nil {
		return nil, fmt.Errorf("kernels: optimizer parameters on %s: %w", d, err)
	}
	return &DeviceParams{dev: d, buf: buf}, nil
}

// Device returns the device p lives on.
func (p *DeviceParams) Device() *gpu.Device { return p.dev }

// Free frees p's device memory. The caller first synchronises the streams
// that launched with p, whose kernels may still read it. A second Free does
// nothing.
func (p *DeviceParams) Free() error {
	buf := p.buf
	p.buf = 0
	return p.dev.Free(buf)
}

// AdamUpdateDevice is AdamUpdate on device memory (keep in sync with
// AdamUpdate): w, g, m and v each hold n elements of T on s's device, and
// the update is enqueued on s, taking its hyperparameters through p. It
// returns once the update is enqueued; it has run when s is synchronised.
// The first call on a device compiles the kernel through NVRTC and loads
// it; later calls reuse it. It panics if step < 1, if n < 0, if p is on another device
// than s or was freed.
func AdamUpdateDevice[T Float](s *gpu.Stream, p *DeviceParams, w, g, m, v gpu.Ptr, n int, lr, beta1, beta2, eps float64, step int) error {
	return adamDevice[T](s, p, w, g, m, v, n, lr, beta1, beta2, eps, 1, step)
}

// AdamWUpdateDevice is AdamWUpdate on device memory (keep in sync with
// AdamWUpdate), as AdamUpdateDevice is AdamUpdate's: the same kernel, with
// the decay factor 1-lr·weightDecay rounded to T on the host.
func AdamWUpdateDevice[T Float](s *gpu.Stream, p *DeviceParams, w, g, m, v gpu.Ptr, n int, lr, beta1, beta2, eps, weightDecay float64, step int) error {
	return adamDevice[T](s, p, w, g, m, v, n, lr, beta1, beta2, eps, 1-lr*weightDecay, step)
}

func adamDevice[T Float](s *gpu.Stream, p *DeviceParams, w, g, m, v gpu.Ptr, n int, lr, beta1, beta2, eps, decay float64, step int) error {
	alpha, epsHat := adamStepSize(lr, beta1, beta2, eps, step)
	k := newAdamConsts(T(beta1), T(beta2), T(alpha), T(epsHat), T(decay))
	h := staging[T](p)
	h[0], h[1], h[2], h[3], h[4], h[5], h[6] = k.b1, k.c1, k.b2, k.c2, k.alpha, k.epsHat, k.decay
	f, err := prepare(s, p, &adamProgram, n, h[:7])
	if f == nil {
		return err
	}
	return launched(f, f.Launch(s, grid(n), block, w, g, m, v, p.buf, n))
}

// SGDUpdateDevice is SGDUpdate on device memory (keep in sync with
// SGDUpdate): w, g and vel each hold n elements of T on s's device; vel
// may be the zero Ptr when momentum is 0. The rest is as AdamUpdateDevice.
// It panics if n < 0, if p is on another device than s or was freed.
func SGDUpdateDevice[T Float](s *gpu.Stream, p *DeviceParams, w, g, vel gpu.Ptr, n int, lr, momentum float64, nesterov bool) error {
	mode := sgdPlain
	switch {
	case momentum == 0:
	case nesterov:
		mode = sgdNesterov
	default:
		mode = sgdMomentum
	}
	h := staging[T](p)
	h[0], h[1] = T(lr), T(momentum)
	f, err := prepare(s, p, &sgdProgram, n, h[:2])
	if f == nil {
		return err
	}
	return launched(f, f.Launch(s, grid(n), block, w, g, vel, p.buf, n, mode))
}

// The variants of sgdSource's loop, as SGDUpdate chooses them.
const (
	sgdPlain    = 0 // momentum 0: w -= lr·g
	sgdMomentum = 1
	sgdNesterov = 2
)

// RMSpropUpdateDevice is RMSpropUpdate on device memory (keep in sync with
// RMSpropUpdate): w, g, ms and mom each hold n elements of T on s's device;
// mom may be the zero Ptr when momentum is 0. The rest is as
// AdamUpdateDevice. It panics if n < 0, if p is on another device than s or
// was freed.
func RMSpropUpdateDevice[T Float](s *gpu.Stream, p *DeviceParams, w, g, ms, mom gpu.Ptr, n int, lr, rho, eps, momentum float64) error {
	withMomentum := 0
	if momentum != 0 {
		withMomentum = 1
	}
	k := newRMSpropConsts[T](lr, rho, eps, momentum)
	h := staging[T](p)
	h[0], h[1], h[2], h[3], h[4] = k.lr, k.rho, k.c, k.eps, k.mu
	f, err := prepare(s, p, &rmspropProgram, n, h[:5])
	if f == nil {
		return err
	}
	return launched(f, f.Launch(s, grid(n), block, w, g, ms, mom, p.buf, n, withMomentum))
}

// staging returns p's host staging buffer as T.
func staging[T Float](p *DeviceParams) []T {
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&p.host)), len(p.host)*8/int(unsafe.Sizeof(z)))
}

// prepare checks a launch of prog over n elements on s, loads prog's
// kernel for T and copies consts into p's buffer on s. It returns a nil
// Function when there is nothing to launch: n is 0, or an error.
func prepare[T Float](s *gpu.Stream, p *DeviceParams, prog *program, n int, consts []T) (*gpu.Function, error) {
	if n < 0 {
		panic(fmt.Sprintf("kernels: %s: negative length %d", prog.kernel, n))
	}
	if p.buf == 0 {
		panic("kernels: " + prog.kernel + ": DeviceParams used after Free")
	}
	d := s.Device()
	if p.dev != d {
		panic(fmt.Sprintf("kernels: %s: DeviceParams of %s used on a stream of %s", prog.kernel, p.dev, d))
	}
	if n == 0 {
		return nil, nil
	}
	f, err := loadedKernel[T](d, prog)
	if err != nil {
		return nil, err
	}
	if err := gpu.CopyHtoD(s, p.buf, consts); err != nil {
		return nil, fmt.Errorf("kernels: %s: copying its parameters: %w", f.Name(), err)
	}
	return f, nil
}

// block is the block shape of every optimizer launch.
var block = gpu.Dim3{blockSize, 1, 1}

// grid returns the grid that covers n elements, one thread each.
func grid(n int) gpu.Dim3 {
	g, _ := gpu.Linear(n, blockSize)
	return g
}

// launched names f in a failed launch's error.
func launched(f *gpu.Function, err error) error {
	if err != nil {
		return fmt.Errorf("kernels: %s: %w", f.Name(), err)
	}
	return nil
}

// A program is one kernel's CUDA C source, holding its float32 and float64
// variants kernel+"_f32" and kernel+"_f64".
type program struct {
	name   string // the NVRTC program's name, as "adam.cu"
	kernel string // the kernels' common prefix
	src    string
}

// loadedKernel returns prog's kernel for T on d, from the device's cache of
// compiled modules (gpu.Device.Module): prog is compiled once per device,
// at first use, even when replicas start together.
func loadedKernel[T Float](d *gpu.Device, prog *program) (*gpu.Function, error) {
	var z T
	suffix := "_f32"
	if unsafe.Sizeof(z) == 8 {
		suffix = "_f64"
	}
	mod, err := d.Module(prog.name, prog.src)
	if err != nil {
		return nil, fmt.Errorf("kernels: compiling %s: %w", prog.name, err)
	}
	f, err := mod.Function(prog.kernel + suffix)
	if err != nil {
		return nil, fmt.Errorf("kernels: loading %s: %w", prog.name, err)
	}
	return f, nil
}

// root is the correctly rounded square root of either precision. For
// float32 it gives the bits of the CPU's float32(math.Sqrt(float64(x))):
// rounding the exact root to double and then to float is innocuous, since
// 53 ≥ 2·24+2.
const rootSource = `
DEVICE float root(float x) { return sqrtf(x); }
DEVICE double root(double x) { return sqrt(x); }
`

// The programs of the launchers above, compiled at first use per device.
var (
	adamProgram    = program{name: "adam.cu", kernel: "adam", src: adamSource}
	sgdProgram     = program{name: "sgd.cu", kernel: "sgd", src: sgdSource}
	rmspropProgram = program{name: "rmsprop.cu", kernel: "rmsprop", src: rmspropSource}
)

// adamSource is the device loop of AdamUpdate and AdamWUpdate; keep in
// sync with adam in optim.go. k holds adamConsts in field order.
const adamSource = rootSource + `
template <typename T>
DEVICE void adam(T *w, const T *g, T *m, T *v, const T *k, long long n) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T gi = g[i];
	T mi = k[0] * m[i] + k[1] * gi;
	T vi = k[2] * v[i] + k[3] * gi * gi;
	m[i] = mi;
	v[i] = vi;
	w[i] = k[6] * w[i] - k[4] * mi / (root(vi) + k[5]);
}
KERNEL void adam_f32(float *w, const float *g, float *m, float *v, const float *k, long long n) { adam(w, g, m, v, k, n); }
KERNEL void adam_f64(double *w, const double *g, double *m, double *v, const double *k, long long n) { adam(w, g, m, v, k, n); }
`

// sgdSource is the device loop of SGDUpdate; keep in sync with sgd in
// optim.go. k holds lr and momentum; mode is sgdPlain, sgdMomentum or
// sgdNesterov, the same for every thread.
const sgdSource = `
template <typename T>
DEVICE void sgd(T *w, const T *g, T *vel, const T *k, long long n, long long mode) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T a = k[0], gi = g[i];
	if (mode == 0) {
		w[i] = w[i] - a * gi;
		return;
	}
	T mu = k[1];
	T vi = mu * vel[i] + gi;
	vel[i] = vi;
	if (mode == 2) w[i] = w[i] - a * (gi + mu * vi);
	else w[i] = w[i] - a * vi;
}
KERNEL void sgd_f32(float *w, const float *g, float *vel, const float *k, long long n, long long mode) { sgd(w, g, vel, k, n, mode); }
KERNEL void sgd_f64(double *w, const double *g, double *vel, const double *k, long long n, long long mode) { sgd(w, g, vel, k, n, mode); }
`

// rmspropSource is the device loop of RMSpropUpdate; keep in sync with
// rmsprop in optim.go. k holds rmspropConsts in field order; momentum is 0
// or 1, the same for every thread.
const rmspropSource = rootSource + `
template <typename T>
DEVICE void rmsprop(T *w, const T *g, T *ms, T *mom, const T *k, long long n, long long momentum) {
	long long i = GLOBAL_INDEX;
	if (i >= n) return;
	T gi = g[i];
	T s = k[1] * ms[i] + k[2] * gi * gi;
	ms[i] = s;
	if (momentum == 0) {
		w[i] = w[i] - k[0] * gi / (root(s) + k[3]);
		return;
	}
	T d = k[4] * mom[i] + gi / (root(s) + k[3]);
	mom[i] = d;
	w[i] = w[i] - k[0] * d;
}
KERNEL void rmsprop_f32(float *w, const float *g, float *ms, float *mom, const float *k, long long n, long long momentum) { rmsprop(w, g, ms, mom, k, n, momentum); }
KERNEL void rmsprop_f64(double *w, const double *g, double *ms, double *mom, const double *k, long long n, long long momentum) { rmsprop(w, g, ms, mom, k, n, momentum); }
`
