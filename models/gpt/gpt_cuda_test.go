//go:build cuda

package gpt_test

import (
	"fmt"
	"testing"

	"github.com/gotrain/gotrain/strategy/strategytest"

	"github.com/gotrain/gotrain/strategy"
)

// TestGPUMatchesCPU: the GPT trained on GPU replicas (one GPU, two replicas
// on one GPU, two GPUs joined by NCCL) ends with the weights of one CPU
// replica, as the MLP's GPU equivalence in strategy checks.
func TestGPUMatchesCPU(t *testing.T) {
	for _, c := range cases {
		if c.F64 {
			continue // the device path is float32's
		}
		t.Run(c.Name, func(t *testing.T) {
			want := train(t, c.equivCase, strategy.WithReplicas(1))
			for _, devs := range [][]string{{"gpu:0"}, {"gpu:0", "gpu:0"}, {"gpu:0", "gpu:1"}} {
				strategytest.CheckSame(t, fmt.Sprint(devs), train(t, c.equivCase, strategy.WithDevices(devs...)), want, c.tol)
			}
		})
	}
}
