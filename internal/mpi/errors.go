package mpi

import "errors"

// ErrNoMPI is what [Init] returns in a gotrain built without the mpi tag.
// Its text is shown to notebook users as it stands, so it says how to get
// a build with MPI.
var ErrNoMPI = errors.New("this gotrain was built without MPI (build with -tags mpi; needs Debian's libopenmpi-dev)")

// ErrFinalized is returned, wrapped, by every method of a World used after
// [World.Finalize], and by [Init] after Finalize: MPI cannot be initialized
// again in the same process.
var ErrFinalized = errors.New("mpi: MPI has been finalized")

// Error is an error that an MPI call returned.
type Error struct {
	Call string // the MPI function, as "MPI_Allreduce"
	Code int    // MPI's error code
	Msg  string // MPI_Error_string's text for Code
}

func (e *Error) Error() string { return e.Call + ": " + e.Msg }
