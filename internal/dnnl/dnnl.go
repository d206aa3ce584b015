//go:build cgo && !nodnnl

package dnnl

/*
#cgo LDFLAGS: -ldnnl -lgomp
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// Available reports whether this build calls oneDNN: true here, false in
// builds with the nodnnl tag or without cgo.
const Available = true

// Version returns the oneDNN library's version and CPU runtime, e.g.
// "oneDNN 2.6.3 (omp)".
func Version() string {
	v := C.dnnl_version()
	rt := "omp"
	if v.cpu_runtime != C.DNNL_RUNTIME_OMP {
		rt = fmt.Sprintf("cpu runtime %d", int(v.cpu_runtime))
	}
	return fmt.Sprintf("oneDNN %d.%d.%d (%s)", int(v.major), int(v.minor), int(v.patch), rt)
}

// Conv is one convolution primitive: built once for a geometry, run at
// every step. It is used by one goroutine at a time (its scratchpad and
// weights buffer are its own), but that goroutine may change OS threads
// between calls: the scratchpad is the caller's (oneDNN's user mode), not
// a thread's.
type Conv struct {
	c       *C.gt_conv
	kind    Kind
	g       Geometry
	impl    string
	threads int // what New was given: a jit kernel runs the threads it was made for
}

// New builds the primitive of kind for g, to run on threads threads; bias
// and relu apply to Forward only (a bias added and a ReLU fused as a
// post-op). The error says what oneDNN refused.
func New(kind Kind, g Geometry, bias, relu bool, threads int) (*Conv, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	if kind != Forward && (bias || relu) {
		return nil, fmt.Errorf("dnnl: %v: want bias and relu on the forward primitive only", kind)
	}
	pb, pr := g.padEnd()
	cg := C.gt_geom{
		n: C.longlong(g.N), h: C.longlong(g.H), w: C.longlong(g.W), c: C.longlong(g.C), k: C.longlong(g.K),
		kh: C.longlong(g.KH), kw: C.longlong(g.KW), oh: C.longlong(g.OH), ow: C.longlong(g.OW),
		sh: C.longlong(g.SH), sw: C.longlong(g.SW), dh: C.longlong(g.DH), dw: C.longlong(g.DW),
		pt: C.longlong(g.PadT), pl: C.longlong(g.PadL), pb: C.longlong(pb), pr: C.longlong(pr),
	}
	var errBuf [256]C.char
	c := C.gt_conv_create(C.int(kind), cg, cbool(bias), cbool(relu), C.int(max(1, threads)), &errBuf[0], C.size_t(len(errBuf)))
	if c == nil {
		return nil, fmt.Errorf("dnnl: %v %v: %s", kind, g, C.GoString(&errBuf[0]))
	}
	cv := &Conv{c: c, kind: kind, g: g, impl: C.GoString(&c.impl[0]), threads: max(1, threads)}
	runtime.AddCleanup(cv, func(c *C.gt_conv) { C.gt_conv_free(c) }, c)
	return cv, nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Impl returns the name of the implementation oneDNN picked, e.g.
// "brgconv:avx512_core" or "jit:avx2"; names starting with "gemm" are its
// im2col fallback.
func (c *Conv) Impl() string { return c.impl }

// Kind returns which primitive c runs.
func (c *Conv) Kind() Kind { return c.kind }

// Geometry returns the shape c was built for.
func (c *Conv) Geometry() Geometry { return c.g }

// Forward computes y [N,OH,OW,K] = conv(x [N,H,W,C], w [KH,KW,C,K]) (+ b
// [K]) (then ReLU) on the threads c was built for. b is ignored unless c was
// built with a bias.
// It panics if c is not a Forward primitive or a buffer's length is wrong.
func (c *Conv) Forward(y, x, w, b []float32) {
	c.want(Forward, [3]bufLen{{"y", len(y), c.g.outLen()}, {"x", len(x), c.g.inLen()}, {"w", len(w), c.g.wLen()}})
	var bp unsafe.Pointer
	if c.c.bias != nil {
		if len(b) != c.g.K {
			panic(fmt.Sprintf("dnnl: forward: want a bias of %d, got %d", c.g.K, len(b)))
		}
		bp = unsafe.Pointer(&b[0])
	}
	c.exec(unsafe.Pointer(&x[0]), unsafe.Pointer(&y[0]), unsafe.Pointer(&w[0]), bp, true)
	runtime.KeepAlive(b)
}

// BackwardData computes dx [N,H,W,C], the gradient of the input, from dy
// [N,OH,OW,K] and w [KH,KW,C,K].
// It panics if c is not a BackwardData primitive or a buffer's length is
// wrong.
func (c *Conv) BackwardData(dx, dy, w []float32) {
	c.want(BackwardData, [3]bufLen{{"dx", len(dx), c.g.inLen()}, {"dy", len(dy), c.g.outLen()}, {"w", len(w), c.g.wLen()}})
	c.exec(unsafe.Pointer(&dy[0]), unsafe.Pointer(&dx[0]), unsafe.Pointer(&w[0]), nil, true)
}

// BackwardWeights computes dw [KH,KW,C,K], the gradient of the weights,
// from x [N,H,W,C] and dy [N,OH,OW,K].
// It panics if c is not a BackwardWeights primitive or a buffer's length
// is wrong.
func (c *Conv) BackwardWeights(dw, x, dy []float32) {
	c.want(BackwardWeights, [3]bufLen{{"dw", len(dw), c.g.wLen()}, {"x", len(x), c.g.inLen()}, {"dy", len(dy), c.g.outLen()}})
	c.exec(unsafe.Pointer(&x[0]), unsafe.Pointer(&dy[0]), unsafe.Pointer(&dw[0]), nil, true)
}

// Time runs c reps times on buffers of its own, as
// Forward, BackwardData or BackwardWeights do (call), and then the
// primitive alone, without the reorders between HWIO and oneDNN's weights
// format (primitive: oneDNN's own figure for the shape), and returns the
// mean of each. gotrain bench resnet shows both, so what the binding costs
// over oneDNN is seen.
func (c *Conv) Time(reps int) (call, primitive time.Duration) {
	a, b := make([]float32, max(c.g.inLen(), c.g.outLen())), make([]float32, max(c.g.inLen(), c.g.outLen()))
	w, bias := make([]float32, c.g.wLen()), make([]float32, c.g.K)
	for i := range a {
		a[i], b[i] = float32(i%13)*0.1-0.6, float32(i%7)*0.1-0.3
	}
	for i := range w {
		w[i] = float32(i%5)*0.1 - 0.2
	}
	var bp unsafe.Pointer
	if c.c.bias != nil {
		bp = unsafe.Pointer(&bias[0])
	}
	run := func(reorders bool) time.Duration {
		c.exec(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&w[0]), bp, reorders) // warm
		start := time.Now()
		for range reps {
			c.exec(unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&w[0]), bp, reorders)
		}
		return time.Since(start) / time.Duration(max(1, reps))
	}
	return run(true), run(false)
}

func (c *Conv) exec(a, b, w, bias unsafe.Pointer, reorders bool) {
	// The pointers are Go memory, which does not move; the C side keeps
	// them only for the length of this call.
	if st := C.gt_conv_exec(c.c, a, b, w, bias, C.int(c.threads), cbool(reorders)); st != 0 {
		panic(fmt.Sprintf("dnnl: %v %v: execute: status %d", c.kind, c.g, int(st)))
	}
	runtime.KeepAlive(c)
}

// bufLen is a buffer's name, its length and the length c wants.
type bufLen struct {
	name      string
	got, want int
}

// want panics unless c is of kind and every buffer has the length c wants.
// The lengths come as values, not as ...any, so that a call, once per
// convolution per step, allocates nothing.
func (c *Conv) want(kind Kind, bufs [3]bufLen) {
	if c.kind != kind {
		panic(fmt.Sprintf("dnnl: %v called on a %v primitive", kind, c.kind))
	}
	for _, b := range bufs {
		if b.got != b.want || b.got == 0 {
			panic(fmt.Sprintf("dnnl: %v %v: want %s of %d elements, got %d", kind, c.g, b.name, b.want, b.got))
		}
	}
}
