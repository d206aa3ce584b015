//go:build cuda

package strategy_test

import (
	"testing"

	"github.com/gotrain/gotrain/gpu/gputest"
	"go.uber.org/goleak"
)

// TestMain runs the GPU replicas' tests against the fake CUDA libraries
// (the real ones with GOTRAIN_GPU_REAL set) and checks that no test leaves
// a replica goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(gputest.WithFakes(m)) }
