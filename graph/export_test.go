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

// ObserveConvs calls f with each conv kernel's node name and the
// implementation it picked, as Compile builds it.
func ObserveConvs(f func(name, impl string)) (restore func()) {
	prev := convObserver
	convObserver = func(n *Node, impl string) { f(n.Name(), impl) }
	return func() { convObserver = prev }
}
