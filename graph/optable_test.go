package graph

import "testing"

// TestOpTable fails when an op's entry in ops is incomplete: an op with a
// kernel lacks a name or a stated gradient, or an op whose buffer a step
// writes has no kernel for one of the dtypes. Under -tags cuda requireCUDA
// is set, so an op cannot exist on the CPU only by accident (issue 13).
func TestOpTable(t *testing.T) {
	for op := range ops {
		e := &ops[op]
		if e.name == "" {
			t.Errorf("op %d: no name", op)
			continue
		}
		hasCPU := e.cpu.f32 != nil || e.cpu.f64 != nil
		if hasCPU && (e.cpu.f32 == nil || e.cpu.f64 == nil) {
			t.Errorf("%s: a CPU kernel for one dtype only", e.name)
		}
		if (e.buf == bufStep) != hasCPU {
			t.Errorf("%s: buffer kind %d with CPU kernel %v: want a kernel exactly for ops whose step writes their buffer", e.name, e.buf, hasCPU)
		}
		// Every op that can sit on a path to a loss says how its gradient
		// flows: a grad, a stop, or backward-only (no second derivatives).
		leaf := e.buf == bufFed || e.buf == bufConst || e.buf == bufVar
		stated := 0
		for _, b := range []bool{e.grad != nil, e.backward, e.stopsGradient, leaf} {
			if b {
				stated++
			}
		}
		if stated != 1 {
			t.Errorf("%s: want exactly one of grad, backward, stopsGradient or a leaf buffer, got %d", e.name, stated)
		}
		if e.product && opKind(op) != opMatMul {
			// ProductRows and Defer read a matmul's transposes and operands.
			t.Errorf("%s: marked as a product, which only matmul can be", e.name)
		}
		if requireCUDA && !e.hostOnly && hasCPU != (e.cuda != nil) {
			t.Errorf("%s: CPU kernel %v, CUDA kernel %v: want both or neither", e.name, hasCPU, e.cuda != nil)
		}
	}
}
