//go:build !mpi

package mpi

import "fmt"

// World is this process's rank in MPI_COMM_WORLD. In this build, without
// the mpi tag, there is none: [Init] returns [ErrNoMPI], and so does every
// method that would communicate.
type World struct{}

// Built reports whether this binary has the binding: false without the mpi
// tag.
const Built = false

// Init returns [ErrNoMPI]: this gotrain was built without the mpi tag.
func Init() (*World, error) { return nil, ErrNoMPI }

// Finalize returns [ErrNoMPI].
func (w *World) Finalize() error { return ErrNoMPI }

// Rank returns 0.
func (w *World) Rank() int { return 0 }

// Size returns 1.
func (w *World) Size() int { return 1 }

// AllReduceF32 returns [ErrNoMPI].
func (w *World) AllReduceF32(buf []float32) error { return noMPI("AllReduceF32") }

// AllReduceF64 returns [ErrNoMPI].
func (w *World) AllReduceF64(buf []float64) error { return noMPI("AllReduceF64") }

// AllGather returns [ErrNoMPI].
func (w *World) AllGather(local []float64) ([][]float64, error) {
	return nil, noMPI("AllGather")
}

// Broadcast returns [ErrNoMPI].
func (w *World) Broadcast(buf []byte, root int) ([]byte, error) {
	return nil, noMPI("Broadcast")
}

func noMPI(op string) error { return fmt.Errorf("mpi: %s: %w", op, ErrNoMPI) }
