//go:build !cgo || nodnnl

package dnnl

import "time"

// Available reports whether this build calls oneDNN: false in builds with
// the nodnnl tag or without cgo, where graph's convolutions use im2col and
// BLAS.
const Available = false

// Version returns "none" in a build without oneDNN.
func Version() string { return "none" }

// Conv is a convolution primitive; a build without oneDNN has none.
type Conv struct{}

// New returns ErrUnavailable in a build without oneDNN.
func New(Kind, Geometry, bool, bool, int) (*Conv, error) { return nil, ErrUnavailable }

// Impl returns "".
func (*Conv) Impl() string { return "" }

// Kind returns Forward.
func (*Conv) Kind() Kind { return Forward }

// Geometry returns the zero Geometry.
func (*Conv) Geometry() Geometry { return Geometry{} }

// Forward panics: there is no primitive to run.
func (*Conv) Forward(_, _, _, _ []float32) { panic(ErrUnavailable) }

// BackwardData panics: there is no primitive to run.
func (*Conv) BackwardData(_, _, _ []float32) { panic(ErrUnavailable) }

// BackwardWeights panics: there is no primitive to run.
func (*Conv) BackwardWeights(_, _, _ []float32) { panic(ErrUnavailable) }

// Time returns zeros: there is no primitive to run.
func (*Conv) Time(int) (call, primitive time.Duration) { return 0, 0 }
