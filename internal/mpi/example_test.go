//go:build mpi && cgo

package mpi_test

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/mpi"
)

// Every rank holds the same gradients here, so their mean over the ranks is
// what each rank started with, whatever the number of ranks.
func ExampleWorld_AllReduceF32() {
	w, err := mpi.Init()
	if err != nil {
		fmt.Println(err)
		return
	}
	// A process calls Finalize once, when it is done with MPI:
	// defer w.Finalize()
	grads := []float32{0.5, -1.25}
	if err := w.AllReduceF32(grads); err != nil {
		fmt.Println(err)
		return
	}
	for i := range grads {
		grads[i] /= float32(w.Size())
	}
	fmt.Printf("%.2f\n", grads)
	// Output: [0.50 -1.25]
}
