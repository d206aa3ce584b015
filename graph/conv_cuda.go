//go:build cuda

package graph

import (
	"github.com/gotrain/gotrain/gpu"
)

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opIm2Col: {plan: windowCUDA("gt_im2col")},
		opCol2Im: {plan: windowCUDA("gt_col2im")},
	})
}

// cudaBuild reports whether this build has NVIDIA devices; Conv2D builds
// the oneDNN conv ops only where it does not (conv.go): a device has no
// kernel for them, and a graph is built before it is compiled for one.
const cudaBuild = true

// windowCUDA is im2col, col2im and the average pool and its gradient: one
// thread per output element.
func windowCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel(layerSrc, name, n.size, b.out(), b.in(0), n.size, b.window(n.win))
	}
}

// window puts w's geometry in n's slot, in the order layersSrc reads it.
func (b *devBuilder) window(w *window) gpu.Ptr {
	return b.ints(w.b, w.h, w.w, w.c, w.kh, w.kw, w.sh, w.sw, w.padT, w.padL, w.oh, w.ow, w.dh, w.dw)
}
