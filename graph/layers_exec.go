package graph

import "github.com/gotrain/gotrain/internal/loops"

// The CPU kernels of the layer ops (layers.go); each is a kernelFunc.

// windowKernel is the kernel of a window op computing out from its one
// input with f: im2col, col2im, the average pool and its gradient.
func windowKernel[T Float](f func(out, in []T, w *window)) kernelFunc[T] {
	return func(n *Node, in [][]T, out []T, _ map[int][]int) func() {
		x, w := in[0], n.win
		return func() { f(out, x, w) }
	}
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

func gatherKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	table, ids, d := in[0], in[1], n.in[0].shape[1]
	rows := n.in[0].shape[0]
	return func() {
		for i, id := range ids {
			k := rowIndex(id, i, rows)
			copy(out[i*d:(i+1)*d], table[k*d:(k+1)*d])
		}
	}
}

func scatterAddKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	ids, dy, d, rows := in[0], in[1], n.shape[1], n.shape[0]
	return func() {
		clear(out)
		for i, id := range ids {
			k := rowIndex(id, i, rows)
			row := out[k*d : (k+1)*d]
			for j, v := range dy[i*d : (i+1)*d] {
				row[j] += v
			}
		}
	}
}

func dropoutMaskKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	step := in[0]
	rate, seed, stream := n.rate, n.seed, n.stream
	return func() { dropoutMask(out, step, rate, seed, stream) }
}

func maskedSumKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, w := in[0], in[1]
	c := n.shape[0]
	acc := make([]float64, c)
	return func() { maskedSum(out, x, w, acc) }
}

func maskedSumGradXKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	w, dy := in[0], in[1]
	return func() { maskedSumGradX(out, w, dy) }
}

func maskedSumGradWKernel[T Float](_ *Node, in [][]T, out []T, _ map[int][]int) func() {
	x, dy := in[0], in[1]
	return func() { maskedSumGradW(out, x, dy) }
}

func allReduceKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	x := in[0]
	c, scale := n.coll, T(n.factor)
	var reduce func()
	switch buf := any(out).(type) {
	case []float32:
		reduce = func() { c.AllReduceF32(buf) }
	case []float64:
		reduce = func() { c.AllReduceF64(buf) }
	}
	return func() {
		copy(out, x)
		reduce()
		if scale != 1 {
			for i := range out {
				out[i] *= scale
			}
		}
	}
}

// im2col is: cols[(b,oy,ox), (ki,kj,c)] = x[b, oy·sh-padT+ki·dh, ox·sw-padL+kj·dw, c],
// zero where the window leaves the image.
func im2col[T Float](cols, x []T, w *window) {
	k := w.kh * w.kw * w.c
	row := 0
	for b := 0; b < w.b; b++ {
		img := x[b*w.h*w.w*w.c : (b+1)*w.h*w.w*w.c]
		for oy := 0; oy < w.oh; oy++ {
			for ox := 0; ox < w.ow; ox++ {
				dst := cols[row*k : (row+1)*k]
				row++
				kj0, kj1 := w.validCols(ox)
				for ki := 0; ki < w.kh; ki++ {
					seg := dst[ki*w.kw*w.c : (ki+1)*w.kw*w.c]
					iy := oy*w.sh - w.padT + ki*w.dh
					if iy < 0 || iy >= w.h || kj0 >= kj1 {
						clear(seg)
						continue
					}
					clear(seg[:kj0*w.c])
					clear(seg[kj1*w.c:])
					ix := ox*w.sw - w.padL + kj0*w.dw
					if w.dw == 1 {
						// The window's columns inside the image are contiguous in x.
						copy(seg[kj0*w.c:kj1*w.c], img[(iy*w.w+ix)*w.c:])
						continue
					}
					for kj := kj0; kj < kj1; kj, ix = kj+1, ix+w.dw {
						copy(seg[kj*w.c:(kj+1)*w.c], img[(iy*w.w+ix)*w.c:])
					}
				}
			}
		}
	}
}

// col2im is im2col's adjoint: dx[b,iy,ix,c] = Σ of the cols elements im2col
// copied from it.
func col2im[T Float](dx, cols []T, w *window) {
	clear(dx)
	k := w.kh * w.kw * w.c
	row := 0
	for b := 0; b < w.b; b++ {
		img := dx[b*w.h*w.w*w.c : (b+1)*w.h*w.w*w.c]
		for oy := 0; oy < w.oh; oy++ {
			for ox := 0; ox < w.ow; ox++ {
				src := cols[row*k : (row+1)*k]
				row++
				kj0, kj1 := w.validCols(ox)
				for ki := 0; ki < w.kh; ki++ {
					iy := oy*w.sh - w.padT + ki*w.dh
					if iy < 0 || iy >= w.h || kj0 >= kj1 {
						continue
					}
					ix := ox*w.sw - w.padL + kj0*w.dw
					// loops.AddTo is a vector loop with the bits of d[j] += v.
					if w.dw == 1 {
						d := img[(iy*w.w+ix)*w.c : (iy*w.w+ix+kj1-kj0)*w.c]
						loops.AddTo(d, d, src[(ki*w.kw+kj0)*w.c:(ki*w.kw+kj1)*w.c])
						continue
					}
					for kj := kj0; kj < kj1; kj, ix = kj+1, ix+w.dw {
						d := img[(iy*w.w+ix)*w.c : (iy*w.w+ix+1)*w.c]
						loops.AddTo(d, d, src[(ki*w.kw+kj)*w.c:(ki*w.kw+kj+1)*w.c])
					}
				}
			}
		}
	}
}

// validCols returns the window columns [kj0,kj1) inside the image for output
// column ox: those kj with 0 ≤ ox·sw-padL+kj·dw < w.
func (w *window) validCols(ox int) (kj0, kj1 int) {
	x0 := ox*w.sw - w.padL
	if x0 < 0 {
		kj0 = (-x0 + w.dw - 1) / w.dw
	}
	kj1 = w.kw
	if r := w.w - x0; r <= 0 {
		kj1 = 0
	} else {
		kj1 = min(kj1, (r+w.dw-1)/w.dw)
	}
	return kj0, max(kj0, kj1)
}

// validRows returns the input rows [y0,y1) that output row oy's window
// covers inside the image; the pooling ops use it (no dilation).
func (w *window) validRows(oy int) (y0, y1 int) {
	top := oy*w.sh - w.padT
	y0, y1 = max(0, top), min(w.h, top+w.kh)
	return y0, max(y0, y1)
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

// rowIndex returns id as a row index of a table of rows rows, or panics with
// an *IndexError.
func rowIndex[T Float](id T, pos, rows int) int {
	k := int(id)
	if T(k) != id || k < 0 || k >= rows {
		panic(&IndexError{Pos: pos, Value: float64(id), Rows: rows})
	}
	return k
}

const golden = 0x9E3779B97F4A7C15

// splitmix is SplitMix64's output function: a bijective mix of z+γ.
func splitmix(z uint64) uint64 {
	z += golden
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// dropoutMask is: out[i] = 0 if u(seed, stream, counter, i) < rate, else
// 1/(1-rate), u uniform in [0,1) with 53 bits. Counter-based, so any element
// of any step can be drawn without state and replicas never share draws.
func dropoutMask[T Float](out, step []T, rate float64, seed, stream uint64) {
	ctr := uint64(step[1])*counterLow + uint64(step[0])
	key := splitmix(splitmix(splitmix(seed)^stream) ^ ctr)
	thr := uint64(rate * (1 << 53))
	keep := T(1 / (1 - rate))
	for i := range out {
		if splitmix(key+uint64(i)*golden)>>11 >= thr {
			out[i] = keep
		} else {
			out[i] = 0
		}
	}
}

// maskedSum is: out[c] = Σ_{b: w[b]≠0} w[b]·Σ_k x[b,k,c], accumulated in
// float64 in acc.
func maskedSum[T Float](out, x, w []T, acc []float64) {
	c := len(out)
	clear(acc)
	if c == 0 || len(w) == 0 {
		clear(out)
		return
	}
	per := len(x) / len(w) // k·c elements per row
	for b, wb := range w {
		if wb == 0 {
			continue
		}
		loops.AccRowsTo(acc, float64(wb), x[b*per:(b+1)*per])
	}
	for j, v := range acc {
		out[j] = T(v)
	}
}

// maskedSumGradX is: dx[b,k,c] = w[b]·dy[c]. Each row's first c elements
// are computed, and the rest copied from them in doubling runs.
func maskedSumGradX[T Float](dx, w, dy []T) {
	c := len(dy)
	if c == 0 || len(w) == 0 {
		return
	}
	per := len(dx) / len(w)
	if per == 0 {
		return
	}
	for b, wb := range w {
		row := dx[b*per : (b+1)*per]
		for j, v := range dy {
			row[j] = wb * v
		}
		for done := c; done < per; done *= 2 {
			copy(row[done:], row[:done])
		}
	}
}

// maskedSumGradW is: dw[b] = Σ_{k,c} x[b,k,c]·dy[c].
func maskedSumGradW[T Float](dw, x, dy []T) {
	c := len(dy)
	if c == 0 || len(dw) == 0 {
		clear(dw)
		return
	}
	per := len(x) / len(dw)
	for b := range dw {
		row := x[b*per : (b+1)*per]
		var s float64
		for r := 0; r < per; r += c {
			for j, v := range row[r : r+c] {
				s += float64(v) * float64(dy[j])
			}
		}
		dw[b] = T(s)
	}
}
