//go:build cuda

package strategy_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gotrain/gotrain/gpu/gputest"
	"go.uber.org/goleak"
)

// TestMain points package gpu at the fake CUDA libraries, so the GPU
// replicas' tests run without a GPU (GOTRAIN_GPU_REAL set keeps the real
// ones, on a machine with an NVIDIA GPU), and checks that no test leaves a
// replica goroutine behind.
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
