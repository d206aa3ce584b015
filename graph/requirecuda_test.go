//go:build !cuda

package graph

// requireCUDA makes TestOpTable require a CUDA kernel beside every CPU
// kernel; a build without -tags cuda has none.
const requireCUDA = false
