//go:build !cuda

package graph

// cudaKernel is an op's kernel on an NVIDIA device: the slot opDef.cuda
// holds. Without -tags cuda there are none: the type is empty, every slot
// stays nil and CompileOn fails (device_nocuda.go). optable_cuda.go is the
// cuda twin; each family's _cuda.go file attaches its kernels.
type cudaKernel struct{}
