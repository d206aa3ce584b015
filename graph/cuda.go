package graph

// cudaKernel is an op's kernel on an NVIDIA device: the slot opDef.cuda
// holds. It is empty until device programs exist; the change that adds them
// (issue 13, design-next §3.5) defines it in a cuda-tagged file, with a
// !cuda twin, and fills every entry of ops that has a CPU kernel.
type cudaKernel struct{}
