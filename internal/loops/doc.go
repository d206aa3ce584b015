// Package loops holds gotrain's numeric hot loops: the all-reduce over
// replica buffers, fused optimizer updates, small vector reductions and the
// element-wise loops the graph engine runs most, generic over float32 and
// float64.
//
// The loops are unchecked: callers (nn, strategy) validate lengths first.
// Each function's doc comment is the reference loop it computes; where lengths
// differ the function may panic with an index out of range or silently use
// the shorter prefix, as the reference loop says.
//
// Parallel kernels (AllReduceSum) start and join their workers inside the
// call: at most GOMAXPROCS workers, each writing a disjoint range, and small
// inputs run serially. Every other kernel runs on the calling goroutine.
//
// Summation order is fixed and documented, so results are reproducible and,
// for AllReduceSum, bit-identical on every replica.
//
// # Assembly
//
// On amd64 with AVX, the Adam loop (AdamUpdate, AdamWUpdate), AddTo, which
// the cross-replica sums use, SubTo, MulTo and DivTo, and the row kernels
// (RowsOpTo, OpRowsTo and SumRowsTo, float32 rows of a multiple of 8;
// AccRowsTo, of a multiple of 4, widening to float64 lanes), which batch
// norm's broadcast ops, masked sums and gradients use, and the dense
// layers' ReLU loops (AddReLU; ReLUGrad with AVX2) run in assembly, 8
// float32 or 4 float64 lanes at a time, with the same operations in the same order as the Go loops and no
// fused multiply-add, so both give the same bits (but for the payload of a
// NaN out of AddReLU). With AVX2, the float32 GELU, GELUGrad and ExpSubTo
// (a softmax's exponentials) run 8 lanes of polynomials in float32 with the
// bits of their Go loops; their float64 forms call math.Erf and math.Exp.
// With AVX, float32 ScaleTo runs 8 lanes, and a norm's float32 row loops
// (Sum, SumSqDev, NormGradSums, NormTo, NormGradTo and
// NormGammaGradAdd) and a softmax gradient's (Dot, SoftmaxGradTo) widen
// 4 elements at a time to 4 float64 lanes, the lanes their Go loops sum in.
// The noasm build tag selects the Go loops everywhere.
//
// FMAPeak is no kernel but a yardstick: a register-only loop of fused
// multiply-adds, 8 or 16 lanes wide, that benchmarks measure the core's
// peak with and print their own figures beside.
//
// # Device kernels
//
// Under -tags cuda each optimizer update has a device version of the same
// name with a Device suffix (AdamUpdate and AdamUpdateDevice, AdamWUpdate,
// SGDUpdate, RMSpropUpdate), taking the same hyperparameters in the same
// order. The slices become gpu.Ptr buffers of n elements of T on the
// device of a gpu.Stream, on which the update is enqueued. By package gpu's
// convention a kernel takes no float arguments, so a step's scalars travel
// in a DeviceParams, one small device buffer per launch site written with
// one copy per launch. Each kernel's CUDA C source sits beside its launcher
// in optim_cuda.go and is compiled once per device at first use, in the
// device's cache of compiled modules (gpu.Device.Module). The
// constants are computed on the host by the CPU kernels' own code and the
// loops are the CPU loops expression for expression, without FMA and with
// IEEE division and square root, so a device update gives the CPU's bits.
package loops
