package dnnl

import (
	"errors"
	"fmt"
)

// ErrUnavailable is New's error in a build without oneDNN.
var ErrUnavailable = errors.New("dnnl: this build has no oneDNN (built with nodnnl or without cgo)")

// Kind is which of a convolution's three primitives a Conv runs.
type Kind int

const (
	Forward         Kind = iota // y = conv(x, w)
	BackwardData                // dx from dy and w
	BackwardWeights             // dw from x and dy
)

// String returns "forward", "backward-data" or "backward-weights".
func (k Kind) String() string {
	switch k {
	case Forward:
		return "forward"
	case BackwardData:
		return "backward-data"
	case BackwardWeights:
		return "backward-weights"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Geometry is a 2-D convolution of NHWC activations with HWIO weights,
// as graph's window describes it: input [N,H,W,C], weights [KH,KW,C,K],
// output [N,OH,OW,K], taps DH rows and DW columns apart, PadT rows above
// and PadL columns left of the image. The padding after the image is what
// makes OH and OW come out (padEnd).
type Geometry struct {
	N, H, W, C int
	K          int
	KH, KW     int
	OH, OW     int
	SH, SW     int
	DH, DW     int
	PadT, PadL int
}

// String returns e.g. "[7,9,11,3]*[3,3,3,16] stride 2x2 dilation 1x1 pad 1,1 -> [7,5,6,16]".
func (g Geometry) String() string {
	return fmt.Sprintf("[%d,%d,%d,%d]*[%d,%d,%d,%d] stride %dx%d dilation %dx%d pad %d,%d -> [%d,%d,%d,%d]",
		g.N, g.H, g.W, g.C, g.KH, g.KW, g.C, g.K, g.SH, g.SW, g.DH, g.DW, g.PadT, g.PadL, g.N, g.OH, g.OW, g.K)
}

// padEnd returns the rows below and columns right of the image that the
// output size implies: oneDNN wants (OH-1)·SH + span = H + PadT + bottom,
// with span the dilated kernel, and never less than zero (a Valid window
// that leaves rows unread).
func (g Geometry) padEnd() (bottom, right int) {
	eh, ew := (g.KH-1)*g.DH+1, (g.KW-1)*g.DW+1
	return max(0, (g.OH-1)*g.SH+eh-g.H-g.PadT), max(0, (g.OW-1)*g.SW+ew-g.W-g.PadL)
}

// Flops returns the floating-point operations of one run of any of the
// three primitives: a multiply and an add per product of the definition,
// that is per output element, input channel and tap that falls inside the
// image. Taps on padding are not counted, as no kernel multiplies them.
func (g Geometry) Flops() float64 {
	inside := func(out, stride, pad, dilation, taps, size int) (n int) {
		for o := range out {
			for t := range taps {
				if i := o*stride - pad + t*dilation; i >= 0 && i < size {
					n++
				}
			}
		}
		return n
	}
	rows := inside(g.OH, g.SH, g.PadT, g.DH, g.KH, g.H)
	cols := inside(g.OW, g.SW, g.PadL, g.DW, g.KW, g.W)
	return 2 * float64(g.N) * float64(rows) * float64(cols) * float64(g.C*g.K)
}

func (g Geometry) inLen() int  { return g.N * g.H * g.W * g.C }
func (g Geometry) outLen() int { return g.N * g.OH * g.OW * g.K }
func (g Geometry) wLen() int   { return g.KH * g.KW * g.C * g.K }

func (g Geometry) check() error {
	for _, d := range []int{g.N, g.H, g.W, g.C, g.K, g.KH, g.KW, g.OH, g.OW, g.SH, g.SW, g.DH, g.DW} {
		if d < 1 {
			return fmt.Errorf("dnnl: %v: want every size, stride and dilation ≥ 1", g)
		}
	}
	if g.PadT < 0 || g.PadL < 0 {
		return fmt.Errorf("dnnl: %v: want padding ≥ 0", g)
	}
	// The padding after the image is derived, so only an output larger than
	// the padded image holds can be wrong: its last window would start past
	// the image.
	if (g.OH-1)*g.SH-g.PadT >= g.H || (g.OW-1)*g.SW-g.PadL >= g.W {
		return fmt.Errorf("dnnl: %v: want an output whose last window starts inside the image", g)
	}
	return nil
}
