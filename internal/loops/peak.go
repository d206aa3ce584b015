package loops

import (
	"runtime"
	"time"
)

// FMAPeak measures, for about d, the float32 multiply-add peak of the core
// the calling goroutine runs on at a vector width of lanes (8: AVX2, 16:
// AVX-512), in GFLOP/s: a loop of 12 independent fused multiply-adds on
// registers, the most any kernel of that width can reach. Benchmarks show
// their figures beside it (oneDNN's convolutions use 16 lanes where the CPU
// has them; OpenBLAS's Haswell kernels, 8); several goroutines measuring at
// once show what the cores reach together. It returns 0 for a width this
// build or CPU has no loop for (noasm, no FMA, no AVX-512).
func FMAPeak(lanes int, d time.Duration) float64 {
	loop := fmaLoop
	switch {
	case lanes == 8 && hasFMALoop:
	case lanes == 16 && hasFMALoop512:
		loop = fmaLoop512
	default:
		return 0
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const chunk = 1 << 16
	loop(chunk) // warm: the vector units may start at a lower clock
	iters, start := 0, time.Now()
	for time.Since(start) < d {
		loop(chunk)
		iters += chunk
	}
	return float64(iters) * 12 * float64(lanes) * 2 / time.Since(start).Seconds() / 1e9
}
