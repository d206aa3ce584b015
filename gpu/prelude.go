package gpu

// Prelude is the header Compile puts before every kernel source. Under
// NVRTC (__CUDACC_RTC__) it maps the kernel dialect to CUDA; elsewhere it
// maps it to C++ for the host, as the fake libraries compile it with c++:
//
//   - KERNEL declares a kernel: extern "C" __global__ on the device,
//     extern "C" on the host;
//   - DEVICE declares a helper function callable from kernels;
//   - GLOBAL_INDEX is the thread's index across the grid's x dimension and
//     GLOBAL_STRIDE the number of threads in it, both long long;
//   - threadIdx, blockIdx, blockDim and gridDim exist on both sides (on the
//     host, thread-local variables that the fake cuLaunchKernel sets through
//     the module's gotrain_fake_set_index);
//   - expf, exp, logf, log, sqrtf, sqrt, tanhf, tanh, erff, erf, fabsf, fabs,
//     fmaxf, fmax, powf and pow are NVRTC's device functions on the device
//     and <math.h>'s on the host.
const Prelude = `// gotrain kernel prelude (package gpu)
#ifdef __CUDACC_RTC__
#define KERNEL extern "C" __global__
#define DEVICE static __device__ __forceinline__
#else
#include <math.h>
struct gotrain_uint3 { unsigned int x, y, z; };
static thread_local gotrain_uint3 threadIdx, blockIdx, blockDim, gridDim;
extern "C" void gotrain_fake_set_index(const unsigned int *v) {
	threadIdx.x = v[0]; threadIdx.y = v[1]; threadIdx.z = v[2];
	blockIdx.x = v[3]; blockIdx.y = v[4]; blockIdx.z = v[5];
	blockDim.x = v[6]; blockDim.y = v[7]; blockDim.z = v[8];
	gridDim.x = v[9]; gridDim.y = v[10]; gridDim.z = v[11];
}
#define KERNEL extern "C"
#define DEVICE static inline
#endif
#define GLOBAL_INDEX ((long long)blockIdx.x * (long long)blockDim.x + (long long)threadIdx.x)
#define GLOBAL_STRIDE ((long long)gridDim.x * (long long)blockDim.x)
#line 1
`
