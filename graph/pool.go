package graph

import (
	"github.com/gotrain/gotrain/internal/loops"
)

// The pooling ops and their gradients.
var (
	opMaxPool     = newOp() // window max, argmax kept by the kernel
	opMaxPoolGrad = newOp() // dx from the pool's argmax and dy
	opAvgPool     = newOp() // window mean over the pixels inside the image
	opAvgPoolGrad = newOp() // dx: each dy spread evenly over its window
)

func init() {
	defineOps(map[opKind]opDef{
		opMaxPool:     {name: "max_pool", cpu: cpu(maxPoolKernel, maxPoolKernel), grad: maxPoolGrad},
		opMaxPoolGrad: {name: "max_pool_grad", cpu: cpu(maxPoolGradKernel, maxPoolGradKernel), backward: true},
		opAvgPool:     {name: "avg_pool", cpu: cpu(windowKernel(avgPool[float32]), windowKernel(avgPool[float64])), grad: avgPoolGrad},
		opAvgPoolGrad: {name: "avg_pool_grad", cpu: cpu(windowKernel(avgPoolSpread[float32]), windowKernel(avgPoolSpread[float64])), backward: true},
	})
}

// MaxPool2D returns the maximum of each poolH x poolW window of the NHWC
// image x, per channel: shape [b,oh,ow,c]. The kernel records where each
// maximum came from (the first, on ties), and the gradient routes dy there.
// It panics with an error wrapping ErrShape if the shapes, strides or
// padding do not fit.
func MaxPool2D(x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	return pool2D("max_pool2d", opMaxPool, x, poolH, poolW, strideH, strideW, pad)
}

// AvgPool2D returns the mean of each poolH x poolW window of the NHWC image
// x, per channel: shape [b,oh,ow,c]. With Same padding a window that
// overhangs the border averages the pixels inside only, as TensorFlow's
// avg_pool does. The gradient spreads each dy evenly over its window's
// pixels.
// It panics with an error wrapping ErrShape if the shapes, strides or
// padding do not fit.
func AvgPool2D(x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	return pool2D("avg_pool2d", opAvgPool, x, poolH, poolW, strideH, strideW, pad)
}

// pool2D adds the pooling op kind of name op over windows of x.
func pool2D(op string, kind opKind, x *Node, poolH, poolW, strideH, strideW int, pad Padding) *Node {
	g := graphOf(op, x)
	win := newWindow(g, op, x.shape, poolH, poolW, strideH, strideW, 1, 1, pad)
	out := g.add(kind, []int{win.b, win.oh, win.ow, win.c}, x)
	out.win = win
	return out
}

func maxPoolGrad(n, dy *Node) []*Node {
	d := n.g.add(opMaxPoolGrad, n.in[0].shape, n, dy)
	d.win = n.win
	return []*Node{d}
}

func avgPoolGrad(n, dy *Node) []*Node {
	d := n.g.add(opAvgPoolGrad, n.in[0].shape, dy)
	d.win = n.win
	return []*Node{d}
}

// maxPoolKernel keeps each output's argmax in aux, for maxPoolGradKernel.
func maxPoolKernel[T Float](n *Node, in [][]T, out []T, aux map[int][]int) func() {
	x, w := in[0], n.win
	arg := make([]int, n.size)
	aux[n.id] = arg
	return func() { maxPool(out, x, arg, w) }
}

func maxPoolGradKernel[T Float](n *Node, in [][]T, out []T, aux map[int][]int) func() {
	arg, dy := aux[n.in[0].id], in[1]
	return func() {
		clear(out)
		for i, v := range dy {
			if a := arg[i]; a >= 0 {
				out[a] += v
			}
		}
	}
}

// avgPool is: out[b,oy,ox,c] = the mean of x[b,iy,ix,c] over the window's
// pixels inside the image (0 for a window with none).
func avgPool[T Float](out, x []T, w *window) {
	c := w.c
	o := 0
	for b := 0; b < w.b; b++ {
		for oy := 0; oy < w.oh; oy++ {
			y0, y1 := w.validRows(oy)
			for ox := 0; ox < w.ow; ox++ {
				dst := out[o*c : (o+1)*c]
				o++
				clear(dst)
				kj0, kj1 := w.validCols(ox)
				x0 := ox*w.sw - w.padL
				for iy := y0; iy < y1; iy++ {
					for kj := kj0; kj < kj1; kj++ {
						base := ((b*w.h+iy)*w.w + x0 + kj) * c
						loops.AddTo(dst, dst, x[base:base+c])
					}
				}
				if n := (y1 - y0) * (kj1 - kj0); n > 0 {
					inv := T(n)
					for j := range dst {
						dst[j] /= inv
					}
				}
			}
		}
	}
}

// avgPoolSpread is avgPool's adjoint: dx[b,iy,ix,c] = Σ over the windows
// holding (iy,ix), in output order, of dy[b,oy,ox,c]/count, count the
// window's pixels inside the image.
func avgPoolSpread[T Float](dx, dy []T, w *window) {
	clear(dx)
	c := w.c
	o := 0
	for b := 0; b < w.b; b++ {
		for oy := 0; oy < w.oh; oy++ {
			y0, y1 := w.validRows(oy)
			for ox := 0; ox < w.ow; ox++ {
				src := dy[o*c : (o+1)*c]
				o++
				kj0, kj1 := w.validCols(ox)
				n := T((y1 - y0) * (kj1 - kj0))
				x0 := ox*w.sw - w.padL
				for iy := y0; iy < y1; iy++ {
					for kj := kj0; kj < kj1; kj++ {
						base := ((b*w.h+iy)*w.w + x0 + kj) * c
						d := dx[base : base+c]
						for j, v := range src {
							d[j] += v / n
						}
					}
				}
			}
		}
	}
}

// maxPool is: out[b,oy,ox,c] = max over the window's pixels inside the image
// of x[b,iy,ix,c], arg the index in x of the first maximum (-1 and 0 for a
// window with no pixel inside).
func maxPool[T Float](out, x []T, arg []int, w *window) {
	c := w.c
	o := 0
	for b := 0; b < w.b; b++ {
		for oy := 0; oy < w.oh; oy++ {
			for ox := 0; ox < w.ow; ox++ {
				dst, a := out[o*c:(o+1)*c], arg[o*c:(o+1)*c]
				o++
				first := true
				kj0, kj1 := w.validCols(ox)
				for ki := 0; ki < w.kh; ki++ {
					iy := oy*w.sh - w.padT + ki
					if iy < 0 || iy >= w.h {
						continue
					}
					for kj := kj0; kj < kj1; kj++ {
						ix := ox*w.sw - w.padL + kj
						base := ((b*w.h+iy)*w.w + ix) * c
						src := x[base : base+c]
						if first {
							copy(dst, src)
							for j := range a {
								a[j] = base + j
							}
							first = false
							continue
						}
						for j, v := range src {
							if v > dst[j] {
								dst[j], a[j] = v, base+j
							}
						}
					}
				}
				if first {
					clear(dst)
					for j := range a {
						a[j] = -1
					}
				}
			}
		}
	}
}
