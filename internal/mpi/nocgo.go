//go:build mpi && !cgo

package mpi

// The binding is C: with -tags mpi but cgo off (CGO_ENABLED=0, or no C
// compiler) the build stops here, with this message, rather than silently
// building the [ErrNoMPI] stub.
var _ int = "internal/mpi: -tags mpi needs cgo (CGO_ENABLED=1 and a C compiler)"
