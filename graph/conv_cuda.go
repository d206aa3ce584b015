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
	addCUDASource("conv", convSrc)
}

// cudaBuild reports whether this build has NVIDIA devices; Conv2D builds
// the oneDNN conv ops only where it does not (conv.go): a device has no
// kernel for them, and a graph is built before it is compiled for one.
const cudaBuild = true

// windowCUDA is im2col, col2im and the average pool and its gradient
// (kernel name): one thread per output element.
func windowCUDA(name string) func(b *devBuilder, n *Node) (func() error, error) {
	return func(b *devBuilder, n *Node) (func() error, error) {
		return b.kernel(name, n.size, b.out(), b.in(0), n.size, b.window(n.win))
	}
}

// window puts w's geometry in n's slot, in the order convSrc and poolSrc
// read it.
func (b *devBuilder) window(w *window) gpu.Ptr {
	return b.ints(w.b, w.h, w.w, w.c, w.kh, w.kw, w.sh, w.sw, w.padT, w.padL, w.oh, w.ow, w.dh, w.dw)
}

// convSrc holds the kernels of im2col and col2im, one thread per output
// element. A window's geometry g is {b, h, w, c, kh, kw, sh, sw, padT, padL,
// oh, ow, dh, dw} (type window).
const convSrc = `
// gt_im2col is im2col, one thread per patch element.
KERNEL void gt_im2col(T *cols, const T *x, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11], k = kh * kw * c;
	long long row = e / k, col = e % k;
	long long ki = col / (kw * c), kj = (col / c) % kw, ch = col % c;
	long long b = row / (oh * ow), oy = (row / ow) % oh, ox = row % ow;
	long long iy = oy * sh - g[8] + ki * g[12], ix = ox * sw - g[9] + kj * g[13];
	cols[e] = (iy < 0 || iy >= h || ix < 0 || ix >= w) ? (T)0 : x[((b * h + iy) * w + ix) * c + ch];
}
// gt_col2im is col2im, one thread per image element summing its patch
// elements in patch-row order, as the CPU adds them: the window taps that
// reach (iy, ix) are visited from the last to the first, so the outputs
// they belong to come in ascending order.
KERNEL void gt_col2im(T *dx, const T *cols, long long n, const long long *g) {
	long long e = GLOBAL_INDEX;
	if (e >= n) return;
	long long h = g[1], w = g[2], c = g[3], kh = g[4], kw = g[5], sh = g[6], sw = g[7];
	long long oh = g[10], ow = g[11], dh = g[12], dw = g[13], k = kh * kw * c;
	long long ch = e % c, ix = (e / c) % w, iy = (e / (c * w)) % h, b = e / (c * w * h);
	T s = 0;
	for (long long ki = kh - 1; ki >= 0; ki--) {
		long long ty = iy + g[8] - ki * dh;
		if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
		long long oy = ty / sh;
		for (long long kj = kw - 1; kj >= 0; kj--) {
			long long tx = ix + g[9] - kj * dw;
			if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
			long long ox = tx / sw;
			s = s + cols[((b * oh + oy) * ow + ox) * k + (ki * kw + kj) * c + ch];
		}
	}
	dx[e] = s;
}
`
