//go:build cuda

package nn_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gotrain/gotrain/gpu/gputest"
	"go.uber.org/goleak"
)

// TestMain points package gpu at the fake CUDA libraries (unless
// GOTRAIN_GPU_REAL is set) and checks for leaked goroutines.
func TestMain(m *testing.M) {
	dir := ""
	if !gputest.Real() {
		var err error
		if dir, err = gputest.Fakes(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}
