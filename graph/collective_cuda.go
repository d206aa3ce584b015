//go:build cuda

package graph

import (
	"github.com/gotrain/gotrain/gpu"
)

func init() {
	defineCUDA(map[opKind]*cudaKernel{
		opAllReduce: {plan: allReduceCUDA},
	})
}

// allReduceCUDA joins the Collective through the host: the step's input is
// copied to a host buffer kept for the program's life, reduced and scaled
// there as allReduceKernel does, and copied back into the node's buffer.
func allReduceCUDA(b *devBuilder, n *Node) (func() error, error) {
	s, in, out, c := b.d.s, b.in(0), b.out(), n.coll
	if b.d.p.dt == Float32 {
		buf, scale := make([]float32, n.size), float32(n.factor)
		return func() error { return hostReduce(s, buf, in, out, scale, c.AllReduceF32) }, nil
	}
	buf := make([]float64, n.size)
	return func() error { return hostReduce(s, buf, in, out, n.factor, c.AllReduceF64) }, nil
}

func hostReduce[T Float](s *gpu.Stream, buf []T, in, out gpu.Ptr, scale T, reduce func([]T)) error {
	if len(buf) == 0 {
		reduce(buf)
		return nil
	}
	if err := gpu.CopyDtoH(s, buf, in); err != nil {
		return err
	}
	reduce(buf)
	if scale != 1 {
		for i := range buf {
			buf[i] *= scale
		}
	}
	return gpu.CopyHtoD(s, out, buf)
}
