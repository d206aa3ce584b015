package data

import (
	"fmt"

	"github.com/gotrain/gotrain/internal/memlimit"
)

// ErrMemory is wrapped by the panics of functions asked for more memory
// than the machine has: the runtime would otherwise end the process with
// "fatal error: out of memory", which no recover catches, and a notebook
// would lose its session. It is the same value as graph.ErrMemory, which
// strategy's Run and nn's Predict report when a model's activations would
// not fit, so errors.Is(err, data.ErrMemory) matches both.
var ErrMemory = memlimit.ErrMemory

// CheckAlloc returns an error wrapping ErrMemory, naming what and its shape,
// when a buffer of that shape with bytesPerValue bytes a value would not fit
// in the machine's memory (the smaller of its RAM and its cgroup's limit);
// otherwise (or when the memory cannot be read) nil. Tensors, datasets and
// layers call it before they allocate, so that a shape that is too large is
// an error rather than the end of the process.
func CheckAlloc(what string, shape []int, bytesPerValue int) error {
	need := memlimit.Size(shape, bytesPerValue)
	if memlimit.Fits(need) {
		return nil
	}
	return fmt.Errorf("data: %w: %s: shape %v %s", ErrMemory, what, shape, memlimit.Shortfall(need))
}
