//go:build !mpi

package mpi

import (
	"errors"
	"testing"
)

func TestInitWithoutMPI(t *testing.T) {
	w, err := Init()
	const want = "this gotrain was built without MPI (build with -tags mpi; needs Debian's libopenmpi-dev)"
	if w != nil || err == nil || err.Error() != want {
		t.Fatalf("Init() = %v, %v; want nil, %q", w, err, want)
	}
	if !errors.Is(err, ErrNoMPI) {
		t.Errorf("Init's error %v is not ErrNoMPI", err)
	}
	if err := w.AllReduceF32(nil); !errors.Is(err, ErrNoMPI) {
		t.Errorf("AllReduceF32 = %v, want ErrNoMPI", err)
	}
}
