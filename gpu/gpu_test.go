//go:build cuda

package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/gpu"
	"github.com/gotrain/gotrain/gpu/gputest"
)

func TestMain(m *testing.M) { gputest.Main(m) }

// open opens device i and a stream on it.
func open(t *testing.T, i int) (*gpu.Device, *gpu.Stream) {
	t.Helper()
	d, err := gpu.Open(i)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Destroy(); err != nil {
			t.Error(err)
		}
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	return d, s
}

// upload allocates device memory holding x.
func upload[T gpu.Elem](t *testing.T, d *gpu.Device, s *gpu.Stream, x []T) gpu.Ptr {
	t.Helper()
	var z T
	p, err := d.Alloc(len(x) * int(sizeOf(z)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(p) })
	if err := gpu.CopyHtoD(s, p, x); err != nil {
		t.Fatal(err)
	}
	return p
}

func sizeOf[T gpu.Elem](T) uintptr {
	var z T
	switch any(z).(type) {
	case float64:
		return 8
	}
	return 4
}

func download[T gpu.Elem](t *testing.T, s *gpu.Stream, p gpu.Ptr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := gpu.CopyDtoH(s, out, p); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCount(t *testing.T) {
	n, err := gpu.Count()
	if err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Fatalf("Count() = %d, want at least 1", n)
	}
	d, _ := open(t, 0)
	if d.Name() == "" || d.String() != "gpu:0" {
		t.Errorf("Name() = %q, String() = %q", d.Name(), d.String())
	}
	if major, _ := d.ComputeCapability(); major < 3 {
		t.Errorf("compute capability major %d", major)
	}
}

func roundTrip[T gpu.Elem](t *testing.T, x []T) {
	d, s := open(t, 0)
	p := upload(t, d, s, x)
	q, err := d.Alloc(len(x) * int(sizeOf(x[0])))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(q)
	if err := s.CopyDtoD(q, p, len(x)*int(sizeOf(x[0]))); err != nil {
		t.Fatal(err)
	}
	got := download[T](t, s, q, len(x))
	for i := range x {
		if got[i] != x[i] {
			t.Fatalf("element %d: got %v, want %v", i, got[i], x[i])
		}
	}
}

func TestCopyRoundTrip(t *testing.T) {
	t.Run("float32", func(t *testing.T) { roundTrip(t, []float32{1.5, -2, float32(math.Pi), 0, 1e-30}) })
	t.Run("float64", func(t *testing.T) { roundTrip(t, []float64{1.5, -2, math.Pi, 0, 1e-300}) })
	t.Run("int32", func(t *testing.T) { roundTrip(t, []int32{1, -2, math.MaxInt32, math.MinInt32, 0}) })
}

func TestMemset32(t *testing.T) {
	d, s := open(t, 0)
	p := upload(t, d, s, make([]float32, 7))
	if err := s.Memset32(p, math.Float32bits(2.5), 5); err != nil {
		t.Fatal(err)
	}
	got := download[float32](t, s, p, 7)
	want := []float32{2.5, 2.5, 2.5, 2.5, 2.5, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

const axpy = `
DEVICE float twice(float v) { return v + v; }

KERNEL void axpy_f32(float *y, const float *x, const float *alpha, long long n) {
	long long i = GLOBAL_INDEX;
	if (i < n) y[i] = alpha[0] * x[i] + twice(y[i]) + expf(0.0f) - 1.0f;
}

KERNEL void iota_i32(int *y, long long n, long long off) {
	for (long long i = GLOBAL_INDEX; i < n; i += GLOBAL_STRIDE) y[i] = (int)(i + off);
}
`

// loadAxpy compiles and loads axpy on d, returning the module and its
// axpy_f32; the module unloads at the test's end.
func loadAxpy(t *testing.T, d *gpu.Device) (*gpu.Module, *gpu.Function) {
	t.Helper()
	ptx, err := d.Compile("axpy.cu", axpy)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Load(ptx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unload() })
	f, err := m.Function("axpy_f32")
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

func TestLaunch(t *testing.T) {
	d, s := open(t, 0)
	m, f := loadAxpy(t, d)
	const n = 1000 // not a multiple of the block
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(n-i)
	}
	px, py := upload(t, d, s, x), upload(t, d, s, y)
	alpha := upload(t, d, s, []float32{0.5})
	grid, block := gpu.Linear(n, 128)
	if grid[0] != 8 {
		t.Fatalf("Linear(%d, 128) grid %v, want 8 blocks", n, grid)
	}
	if err := f.Launch(s, grid, block, py, px, alpha, n); err != nil {
		t.Fatal(err)
	}
	got := download[float32](t, s, py, n)
	for i := range got {
		if want := 0.5*x[i] + 2*y[i]; got[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
		}
	}

	// A grid-stride loop over fewer threads than elements, with int64.
	g, err := m.Function("iota_i32")
	if err != nil {
		t.Fatal(err)
	}
	pi := upload(t, d, s, make([]int32, 77))
	if err := g.Launch(s, gpu.Dim3{3, 1, 1}, gpu.Dim3{5, 1, 1}, pi, int64(77), 10); err != nil {
		t.Fatal(err)
	}
	for i, v := range download[int32](t, s, pi, 77) {
		if v != int32(i+10) {
			t.Fatalf("iota[%d] = %d, want %d", i, v, i+10)
		}
	}

	if _, err := m.Function("nosuch"); err == nil || !strings.Contains(err.Error(), "cuModuleGetFunction(nosuch)") {
		t.Errorf("Function(nosuch) error %v", err)
	}
}

func TestLaunchFloatPanics(t *testing.T) {
	d, s := open(t, 0)
	_, f := loadAxpy(t, d)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "float32") {
			t.Errorf("recovered %v, want a panic naming float32", r)
		}
	}()
	f.Launch(s, gpu.Dim3{1, 1, 1}, gpu.Dim3{1, 1, 1}, gpu.Ptr(0), gpu.Ptr(0), float32(1), 1)
}

func TestCompileError(t *testing.T) {
	d, _ := open(t, 0)
	_, err := d.Compile("broken.cu", "KERNEL void broken(float *y) { y[0] = undeclared_name; }\n")
	var e *gpu.Error
	if !errors.As(err, &e) {
		t.Fatalf("Compile error %v (%T), want *gpu.Error", err, err)
	}
	if e.Name != "NVRTC_ERROR_COMPILATION" || !strings.Contains(e.Log, "undeclared_name") ||
		!strings.Contains(err.Error(), "nvrtcCompileProgram(broken.cu") {
		t.Errorf("got %q (Name %q, Log %q), want NVRTC_ERROR_COMPILATION with a log naming undeclared_name", err, e.Name, e.Log)
	}
}

// TestModuleCompilesOncePerDevice: the device's cache compiles a source at
// its first request, returns that module to concurrent and later requests,
// compiles again on another device, and keeps no failure.
func TestModuleCompilesOncePerDevice(t *testing.T) {
	d, _ := open(t, 0)
	mods := make([]*gpu.Module, 4)
	errs := make([]error, len(mods))
	done := make(chan int)
	for i := range mods {
		go func() {
			mods[i], errs[i] = d.Module("axpy.cu", axpy)
			done <- i
		}()
	}
	for range mods {
		<-done
	}
	for i, m := range mods {
		if errs[i] != nil || m != mods[0] {
			t.Fatalf("request %d: module %p, error %v; want request 0's module %p", i, m, errs[i], mods[0])
		}
	}
	if _, err := mods[0].Function("axpy_f32"); err != nil {
		t.Fatal(err)
	}
	if got := d.Compiles(); got != 1 {
		t.Errorf("%d compiles for 4 requests of one source, want 1", got)
	}
	d1, _ := open(t, 1)
	if m1, err := d1.Module("axpy.cu", axpy); err != nil || m1 == mods[0] || d1.Compiles() != 1 {
		t.Errorf("on a second device: module %p (first device's %p), error %v, %d compiles; want a module of its own, one compile", m1, mods[0], err, d1.Compiles())
	}
	const broken = "KERNEL void broken(float *y) { y[0] = undeclared_name; }\n"
	for i := range 2 {
		if _, err := d.Module("broken.cu", broken); err == nil {
			t.Errorf("request %d of a broken source: no error", i)
		}
	}
	if got := d.Compiles(); got != 1 {
		t.Errorf("%d compiles after two failed ones, want still 1", got)
	}
}

func naiveGemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for l := range k {
				ia, ib := i*lda+l, l*ldb+j
				if transA {
					ia = l*lda + i
				}
				if transB {
					ib = j*ldb + l
				}
				x, y := a[ia], b[ib]
				s += x * y
			}
			c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
		}
	}
}

func randSlice(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.Float64()*2 - 1
	}
	return x
}

func toF32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// wantNear fails t at the first element of got farther than tol·(1+|want|)
// from want.
func wantNear[T float32 | float64](t *testing.T, got []T, want []float64, tol float64) {
	t.Helper()
	for i, g := range got {
		if math.Abs(float64(g)-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("C[%d] = %v, want %v", i, g, want[i])
		}
	}
}

func TestGemm(t *testing.T) {
	d, s := open(t, 0)
	h, err := gpu.NewHandle(s)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	r := rand.New(rand.NewPCG(13, 1))
	const m, n, k, pad = 5, 3, 7, 2 // non-square, with row padding
	for _, tc := range []struct{ transA, transB bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		name := fmt.Sprintf("transA=%v,transB=%v", tc.transA, tc.transB)
		rowsA, colsA := m, k
		if tc.transA {
			rowsA, colsA = k, m
		}
		rowsB, colsB := k, n
		if tc.transB {
			rowsB, colsB = n, k
		}
		lda, ldb, ldc := colsA+pad, colsB+pad, n+pad
		a, b, c := randSlice(r, rowsA*lda), randSlice(r, rowsB*ldb), randSlice(r, m*ldc)
		want := append([]float64(nil), c...)
		naiveGemm(tc.transA, tc.transB, m, n, k, 1.5, a, lda, b, ldb, 0.25, want, ldc)
		t.Run(name+"/f64", func(t *testing.T) {
			pa, pb, pc := upload(t, d, s, a), upload(t, d, s, b), upload(t, d, s, c)
			if err := h.Gemm64(tc.transA, tc.transB, m, n, k, 1.5, pa, lda, pb, ldb, 0.25, pc, ldc); err != nil {
				t.Fatal(err)
			}
			wantNear(t, download[float64](t, s, pc, len(c)), want, 1e-12)
		})
		t.Run(name+"/f32", func(t *testing.T) {
			pa, pb, pc := upload(t, d, s, toF32(a)), upload(t, d, s, toF32(b)), upload(t, d, s, toF32(c))
			if err := h.Gemm32(tc.transA, tc.transB, m, n, k, 1.5, pa, lda, pb, ldb, 0.25, pc, ldc); err != nil {
				t.Fatal(err)
			}
			wantNear(t, download[float32](t, s, pc, len(c)), want, 1e-5)
		})
	}
}

func TestAllReduceSum(t *testing.T) {
	if !gpu.Available() {
		t.Skip("NCCL not available")
	}
	n, err := gpu.Count()
	if err != nil {
		t.Fatal(err)
	}
	if n < 2 {
		t.Skipf("%d device, want 2", n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var devs []*gpu.Device
	var streams []*gpu.Stream
	var bufs []gpu.Ptr
	const count = 9
	for i := range 2 {
		d, s := open(t, i)
		x := make([]float32, count)
		for j := range x {
			x[j] = float32((i + 1) * (j + 1))
		}
		devs, streams, bufs = append(devs, d), append(streams, s), append(bufs, upload(t, d, s, x))
	}
	comms, err := gpu.CommInitAll(devs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range comms {
			c.Destroy()
		}
	}()
	if err := gpu.AllReduceSum[float32](comms, streams, bufs, bufs, count); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := streams[i].Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := download[float32](t, streams[i], bufs[i], count)
		for j, v := range got {
			if want := float32(3 * (j + 1)); v != want {
				t.Fatalf("device %d element %d: got %v, want %v", i, j, v, want)
			}
		}
	}
}

func TestOutOfMemory(t *testing.T) {
	if os.Getenv("GOTRAIN_GPU_REAL") != "" {
		t.Skip("fault injection needs the fake driver")
	}
	n, err := gpu.Count()
	if err != nil || n < 2 {
		t.Skip("want 2 fake devices")
	}
	d, _ := open(t, 1)
	defer gputest.FailAlloc(1)()
	_, err = d.Alloc(256 << 20)
	var e *gpu.Error
	if !errors.As(err, &e) || !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Fatalf("Alloc error %v (%T), want a *gpu.Error that is ErrOutOfMemory", err, err)
	}
	const want = "gpu: cuMemAlloc_v2(268435456 bytes) on device 1: CUDA_ERROR_OUT_OF_MEMORY: out of memory"
	if err.Error() != want || e.Device != 1 || e.Code != 2 {
		t.Errorf("got %q (device %d, code %d), want %q", err, e.Device, e.Code, want)
	}
	p, err := d.Alloc(64) // only the first fails
	if err != nil {
		t.Fatalf("second Alloc: %v", err)
	}
	d.Free(p)
}

func TestInvalidDevice(t *testing.T) {
	n, err := gpu.Count()
	if err != nil {
		t.Fatal(err)
	}
	_, err = gpu.Open(n)
	var e *gpu.Error
	if !errors.As(err, &e) || e.Name != "CUDA_ERROR_INVALID_DEVICE" || e.Device != n ||
		!strings.HasPrefix(err.Error(), fmt.Sprintf("gpu: cuDeviceGet on device %d: CUDA_ERROR_INVALID_DEVICE", n)) {
		t.Fatalf("Open(%d) error %v, want CUDA_ERROR_INVALID_DEVICE from cuDeviceGet", n, err)
	}
}
