//go:build !cuda

package graph

import "github.com/gotrain/gotrain/gpu"

// compileOn fails: device kernels are compiled in only with -tags cuda.
func compileOn(p *Program, dev *gpu.Device) error {
	return progErr("compile on device", gpu.ErrNotBuilt.Error(), gpu.ErrNotBuilt)
}
