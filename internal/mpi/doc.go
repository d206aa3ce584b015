// Package mpi is gotrain's binding to OpenMPI: the collectives through which
// the worker processes of a multi-worker strategy reduce, for workers that
// mpirun starts. A [World] is this process's rank in MPI_COMM_WORLD and
// implements strategy.Cluster.
//
//	w, err := mpi.Init()
//	if err != nil { … }
//	defer w.Finalize()
//	err = w.AllReduceF32(grads) // Σ over every rank, in place
//
// # Building
//
// The binding is built with -tags mpi and cgo, and needs Debian's
// libopenmpi-dev (its flags come from pkg-config ompi) and openmpi-bin
// (mpirun). Without the tag the package has the same API, but [Init]
// returns [ErrNoMPI], so the rest of gotrain builds and tests without
// OpenMPI.
//
// # Processes
//
// Every worker is one process started by
//
//	mpirun --bind-to none -np N worker…
//
// The --bind-to none matters: by default mpirun binds each rank to one
// core, and the Go runtime, which sizes GOMAXPROCS from the CPUs the process
// may run on, then runs every rank on a single thread.
//
// The Jupyter kernel is never a rank; it starts mpirun as a child process.
// OpenMPI 4.1 has no fault tolerance: when a rank dies, the others block in
// their next collective forever, MPI_ERRORS_RETURN notwithstanding, and MPI
// cannot be initialized again in a process after MPI_Finalize. A kernel that
// was a rank would be stuck with its workers. mpirun, by contrast, ends the
// whole job within seconds of a rank's crash, so a kernel that is only
// mpirun's parent sees the job exit and can start another.
//
// # Threads
//
// [Init] asks for MPI_THREAD_MULTIPLE, which OpenMPI grants, and fails if
// MPI offers less than MPI_THREAD_SERIALIZED. The methods of a World may
// therefore be called from any goroutine, whichever OS thread it runs on,
// but not concurrently: a World is not safe for concurrent use. Every rank
// must call the same collectives in the same order, with the same lengths
// where a method says so; a rank that calls another collective, or none,
// leaves the others blocked.
//
// MPI wants MPI_Finalize called on the thread that called MPI_Init_thread.
// Init therefore starts one goroutine, locked to its OS thread, that calls
// both; it lives until [World.Finalize], which waits for it. MPI_Init_thread
// leaves Go's signal handlers alone (OpenMPI does not replace handlers that
// are already installed), so a nil dereference after Init is still a
// recoverable panic.
//
// # Memory
//
// AllReduceF32 and AllReduceF64 run every training step. They hand the
// slice's memory straight to MPI_Allreduce with MPI_IN_PLACE (cgo allows a
// pointer to Go memory that holds no Go pointers), so they neither copy nor
// allocate. Every call is blocking: MPI keeps no pointer to Go memory after
// a call returns. Non-blocking calls would need buffers allocated in C.
//
// # Errors
//
// The world's communicator has MPI_ERRORS_RETURN, so a failing MPI call
// returns an [*Error] naming the call and MPI's error string instead of
// aborting the process. An error leaves the world in an unknown state: treat
// it as fatal for the job. A World must not be used after Finalize; its
// methods then return [ErrFinalized].
package mpi
