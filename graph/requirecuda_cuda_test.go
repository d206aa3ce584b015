//go:build cuda

package graph

// requireCUDA makes TestOpTable require a CUDA kernel beside every CPU
// kernel: under -tags cuda an op cannot exist on the CPU only (issue 13).
const requireCUDA = true
