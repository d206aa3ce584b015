package graph

import "github.com/gotrain/gotrain/internal/dnnl"

// ConvOneDNNBuilt reports whether this build's float32 convolutions can run
// through oneDNN.
const ConvOneDNNBuilt = dnnl.Available && !cudaBuild

// SetConvOneDNN makes graphs built from now on use the oneDNN conv ops
// (on, where built) or im2col and gemm (off, the reference).
func SetConvOneDNN(on bool) (restore func()) {
	prev := convOneDNN
	convOneDNN = on && ConvOneDNNBuilt
	return func() { convOneDNN = prev }
}

// FusedBatchNormBuilt reports whether this build's BatchNormSums and
// BatchNorm build the fused ops (false under -tags cuda).
const FusedBatchNormBuilt = !cudaBuild

// SetFusedBatchNorm makes graphs built from now on use the fused batch norm
// ops (on, where built) or their composition of element-wise ops (off, the
// reference).
func SetFusedBatchNorm(on bool) (restore func()) {
	prev := fusedBatchNorm
	fusedBatchNorm = on && FusedBatchNormBuilt
	return func() { fusedBatchNorm = prev }
}

// StepOps returns the op name of each step p runs, in order.
func StepOps(p *Program) []string {
	var out []string
	for _, s := range p.steps {
		out = append(out, ops[s.n.op].name)
	}
	return out
}
