//go:build cuda

package gpt_test

import (
	"testing"

	"github.com/gotrain/gotrain/gpu/gputest"
	"go.uber.org/goleak"
)

// TestMain points package gpu at the fake CUDA libraries (unless
// GOTRAIN_GPU_REAL is set) and checks for leaked goroutines.
func TestMain(m *testing.M) { goleak.VerifyTestMain(gputest.WithFakes(m)) }
