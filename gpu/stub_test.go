//go:build !cuda

package gpu_test

import (
	"errors"
	"testing"

	"github.com/gotrain/gotrain/gpu"
)

func TestStub(t *testing.T) {
	if err := gpu.Init(); !errors.Is(err, gpu.ErrNotBuilt) {
		t.Errorf("Init() = %v, want ErrNotBuilt", err)
	}
	if n, err := gpu.Count(); n != 0 || !errors.Is(err, gpu.ErrNotBuilt) {
		t.Errorf("Count() = %d, %v, want 0, ErrNotBuilt", n, err)
	}
	if _, err := gpu.Open(0); !errors.Is(err, gpu.ErrNotBuilt) {
		t.Errorf("Open(0) error %v, want ErrNotBuilt", err)
	}
	if gpu.Available() {
		t.Error("Available() = true without -tags cuda")
	}
	if _, err := gpu.CommInitAll(nil); !errors.Is(err, gpu.ErrNotBuilt) {
		t.Errorf("CommInitAll error %v, want ErrNotBuilt", err)
	}
}
