// Package gputest builds the fake CUDA libraries of package gpu for tests
// that run without a GPU, and points package gpu's loader at them.
//
// A package whose tests use package gpu runs them through Main:
//
//	func TestMain(m *testing.M) { gputest.Main(m) }
//
// which uses the fakes, or the real libraries when GOTRAIN_GPU_REAL is set
// (the device check, scripts/gpu-check.sh).
//
// The fakes need the C and C++ compilers ($CC, default cc; $CXX, default
// c++) at test time: the fake NVRTC compiles kernels with c++.
package gputest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// Real reports whether tests run against the real CUDA libraries
// (GOTRAIN_GPU_REAL is set) rather than the fakes.
func Real() bool { return os.Getenv("GOTRAIN_GPU_REAL") != "" }

// Main runs a package's tests, against the fakes unless Real, and exits
// with their status.
func Main(m *testing.M) { os.Exit(WithFakes(m).Run()) }

// TestingM is what testing.M offers a TestMain, and what wrappers of it
// (goleak.VerifyTestMain) take.
type TestingM interface{ Run() int }

// WithFakes returns m whose Run builds the fakes first (unless Real) and
// removes them after, for a TestMain that wraps m in something else too:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(gputest.WithFakes(m)) }
func WithFakes(m TestingM) TestingM { return withFakes{m} }

type withFakes struct{ m TestingM }

func (w withFakes) Run() int {
	if Real() {
		return w.m.Run()
	}
	dir, err := Fakes()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return w.m.Run()
}

// fakes are the fake libraries: the file each builds, its source in
// gpu/testdata/fake, the variable package gpu reads its path from, and
// extra link flags.
var fakes = []struct {
	lib, src, env string
	ldflags       []string
}{
	{"libcuda.so.1", "fakecuda.c", "GOTRAIN_LIBCUDA", []string{"-ldl", "-lpthread"}},
	{"libcublas.so", "fakecublas.c", "GOTRAIN_LIBCUBLAS", nil},
	{"libnccl.so.2", "fakenccl.c", "GOTRAIN_LIBNCCL", []string{"-lpthread"}},
	{"libnvrtc.so", "fakenvrtc.c", "GOTRAIN_LIBNVRTC", nil},
}

var built struct {
	once sync.Once
	dir  string // immutable after once
	err  error
}

// Fakes builds the fake libcuda.so.1, libcublas.so, libnccl.so.2 and
// libnvrtc.so into a new temporary directory, once per process, and sets
// GOTRAIN_LIBCUDA, GOTRAIN_LIBCUBLAS, GOTRAIN_LIBNCCL and GOTRAIN_LIBNVRTC
// to them, and GOTRAIN_FAKE_NVRTC_DIR to the directory, where the fake
// NVRTC leaves compiled kernels. It must run before package gpu's first
// Init. The caller removes dir when its tests are done.
func Fakes() (dir string, err error) {
	built.once.Do(func() { built.dir, built.err = build() })
	return built.dir, built.err
}

func build() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("gputest: cannot locate the fakes' sources")
	}
	srcDir := filepath.Join(filepath.Dir(file), "..", "testdata", "fake")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	dir, err := os.MkdirTemp("", "gotrain-gpu-fakes-")
	if err != nil {
		return "", fmt.Errorf("gputest: %w", err)
	}
	for _, f := range fakes {
		out := filepath.Join(dir, f.lib)
		args := append([]string{"-O2", "-shared", "-fPIC", "-Wall", "-o", out, filepath.Join(srcDir, f.src)}, f.ldflags...)
		if msg, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("gputest: building %s: %w\n%s", f.lib, err, msg)
		}
		os.Setenv(f.env, out)
	}
	os.Setenv("GOTRAIN_FAKE_NVRTC_DIR", dir)
	return dir, nil
}

var failGen struct {
	sync.Mutex
	n int
}

// FailAlloc makes the fake driver's n-th cuMemAlloc_v2 from now fail with
// CUDA_ERROR_OUT_OF_MEMORY (n = 1: the next one); restore turns that off.
// It sets the process's GOTRAIN_FAKE_CUDA_FAIL_ALLOC, so tests that use it
// must not run in parallel with others that allocate.
func FailAlloc(n int) (restore func()) {
	// The fake counts from each new value; the generation makes every
	// call's value new.
	failGen.Lock()
	failGen.n++
	v := strconv.Itoa(n) + "@" + strconv.Itoa(failGen.n)
	failGen.Unlock()
	os.Setenv("GOTRAIN_FAKE_CUDA_FAIL_ALLOC", v)
	return func() { os.Unsetenv("GOTRAIN_FAKE_CUDA_FAIL_ALLOC") }
}
