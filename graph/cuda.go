//go:build !cuda

package graph

// cudaKernel is an op's kernel on an NVIDIA device: the slot opDef.cuda
// holds. Without -tags cuda there are none: the type is empty, every slot
// stays nil and CompileOn fails (device_nocuda.go). optable_cuda.go is the
// cuda twin, which defines the kernels and attaches them.
type cudaKernel struct{}

// attachCUDA attaches no kernel in a build without -tags cuda.
func attachCUDA() {}
