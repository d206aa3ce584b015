//go:build !cuda

package strategy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a replica goroutine (or a prefetch
// goroutine of a dataset) behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
