//go:build cuda

package nn_test

import (
	"testing"

	"github.com/gotrain/gotrain/strategy"
)

// TestAdamWWithoutDecayGPU is TestAdamWWithoutDecay with the updates on a
// GPU's copies (the device rule).
func TestAdamWWithoutDecayGPU(t *testing.T) {
	testAdamWWithoutDecay(t, "gpu:0", strategy.WithDevices("gpu:0"))
}
