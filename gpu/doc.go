// Package gpu binds the CUDA driver API, cuBLAS, NCCL and NVRTC, loaded at
// run time, so that gotrain can run replicas on NVIDIA GPUs.
//
// # Building and loading
//
// The bindings are compiled only with -tags cuda. They use purego (dlopen
// and dlsym), so the binary needs neither CUDA headers nor CUDA libraries
// to build, and builds with or without cgo (CGO_ENABLED=0 -tags cuda
// works). Without the tag the package keeps the same API, and Init, Count
// and every call that needs a library return ErrNotBuilt; the rest of
// gotrain calls it unconditionally.
//
// The libraries are found by these names, or at the paths in the
// environment variables:
//
//	driver  libcuda.so.1                                     GOTRAIN_LIBCUDA
//	cuBLAS  libcublas.so.13, libcublas.so.12, libcublas.so   GOTRAIN_LIBCUBLAS
//	NCCL    libnccl.so.2                                     GOTRAIN_LIBNCCL
//	NVRTC   libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so      GOTRAIN_LIBNVRTC
//
// The driver loads at Init, the others at first use. NCCL is optional:
// Available reports it, and callers fall back to copies between devices.
// Driver entry points are resolved by their versioned names
// (cuMemAlloc_v2, cuStreamDestroy_v2, ...), since an unversioned symbol may
// be the legacy ABI.
//
// # Devices, contexts and threads
//
// A Device is a GPU's primary context, which cuBLAS and NCCL share. The
// driver keeps one current context per OS thread. Every method of a
// Device, Stream, Module, Function and Handle locks the calling goroutine
// to its thread for the call and makes its device's context current when
// it is not, so a goroutine may use several devices in turn. A replica
// that stays on one device locks its goroutine with runtime.LockOSThread
// and calls Bind once; the check in each call then finds its context
// current.
//
// Work is enqueued on a Stream and runs in order on it. CopyHtoD returns
// once the Go slice may be reused; CopyDtoH returns once the slice holds
// the data. Device memory is addressed by Ptr and is never touched by Go.
//
// # Errors
//
// Every failing call returns an *Error naming the call, its device and the
// library's status name and description:
//
//	gpu: cuMemAlloc_v2(268435456 bytes) on device 1: CUDA_ERROR_OUT_OF_MEMORY: out of memory
//
// errors.Is(err, ErrOutOfMemory) reports an allocation failure. A failed
// Compile carries NVRTC's program log in Error.Log. Misuse (a negative
// size, a float kernel parameter, inconsistent gemm shapes) panics.
//
// # Kernels and the parameter convention
//
// Kernels are CUDA C sources compiled at run time by NVRTC (Compile, with
// --fmad=false, -prec-div=true and -prec-sqrt=true, so that they round as
// gotrain's CPU kernels do) and loaded with Load. A Device owns one cache
// of compiled modules: Module compiles and loads a source at its first
// request on the device and returns the same module to every later one, so
// graph's ops, loops' optimizer kernels and strategy's gradient sum each
// compile once per device; Close unloads them. The sources are written
// in a subset of CUDA C that also compiles as C++ on the host, which is
// how the fake libraries run them in CI:
//
//	KERNEL void scale_f32(float *y, const float *a, long long n) {
//		long long i = GLOBAL_INDEX;
//		if (i < n) y[i] = a[0] * y[i];
//	}
//
// The rules, which later packages' kernels depend on:
//
//   - A kernel's parameters are only pointers and 64-bit integers (long
//     long), at most MaxParams of them. Launch takes Ptr, int, int64 or
//     uint64 arguments and panics on others. A floating-point scalar travels
//     in a small device buffer (a[0] above).
//   - Kernels are declared KERNEL (extern "C", so names are not mangled)
//     and helpers DEVICE; the macros come from Prelude, which Compile puts
//     before the source.
//   - One thread per element or per row: GLOBAL_INDEX and GLOBAL_STRIDE
//     index the grid; no shared memory and no __syncthreads.
//   - Math goes through the device functions the prelude maps (expf, exp,
//     logf, log, sqrtf, sqrt, tanhf, tanh, erff, erf and a few more).
//
// The fake cuLaunchKernel calls every kernel through a function type of
// MaxParams long long parameters. That is valid under this convention on
// x86-64 System V, where pointers and long long are all passed alike
// (INTEGER class) and the caller pops the arguments, so a kernel of fewer
// parameters finds its own where it expects them.
//
// # cuBLAS and NCCL
//
// A Handle enqueues on one stream in the default math mode (no TF32).
// Gemm32 and Gemm64 take row-major operands, computing the column-major
// Cᵀ = Bᵀ·Aᵀ; GemmBatched32 and GemmBatched64 do so for a batch of
// products in one call, from device arrays of matrix pointers. CommInitAll makes one NCCL communicator over local devices,
// and AllReduceSum sums a buffer across its ranks in one NCCL group.
//
// # Tests without a GPU
//
// Package gputest builds fake libcuda.so.1, libcublas.so, libnccl.so.2 and
// libnvrtc.so from testdata/fake over host memory and points the
// variables above at them; go test -tags cuda ./... then runs the GPU
// path. GOTRAIN_FAKE_CUDA_DEVICES sets the fake device count (default 2)
// and gputest.FailAlloc injects an out-of-memory error.
package gpu

// BUG(gpu): CopyDtoD copies within one device; copies between devices
// (cuMemcpyPeerAsync), events and pinned host memory are not bound yet.
