//go:build noasm || !amd64

package loops

// The vector loops do not exist in this build: every kernel runs its Go loop.
func adamVector[T Float](w, g, m, v []T, k *adamConsts[T]) int { return 0 }

func addVector[T Float](dst, a, b []T) int { return 0 }

func subVector[T Float](dst, a, b []T) int { return 0 }

func mulVector[T Float](dst, a, b []T) int { return 0 }

func divVector[T Float](dst, a, b []T) int { return 0 }

func reluGradVector[T Float](out, y, dy []T) int { return 0 }

func addReLUVector[T Float](dst, a, b []T) int { return 0 }

const hasAVX2 = false

const hasFMALoop, hasFMALoop512 = false, false

func fmaLoop(int) {}

func fmaLoop512(int) {}

func geluAVX32(out, x []float32, k *polyConsts) { panic("kernels: no assembly in this build") }

func geluGradAVX32(out, x, dy []float32, k *polyConsts) {
	panic("kernels: no assembly in this build")
}

func expSubAVX32(dst, x []float32, shift float32, acc *[8]float32, k *polyConsts) {
	panic("kernels: no assembly in this build")
}

const hasAVX = false

func maxAVX32(x []float32, acc *[8]float32) { panic("kernels: no assembly in this build") }

func laneSumAVX32(x []float32, acc *[4]float64) { panic("kernels: no assembly in this build") }

func laneSumSqDevAVX32(x []float32, mean float64, acc *[4]float64) {
	panic("kernels: no assembly in this build")
}

func normGradSumsAVX32(x, dy, gamma []float32, mean, rstd float64, acc *[8]float64) {
	panic("kernels: no assembly in this build")
}

func normAVX32(dst, x, gamma, beta []float32, mean, rstd float64) {
	panic("kernels: no assembly in this build")
}

func normGradAVX32(dst, x, dy, gamma []float32, mean, rstd, mg, mgx float64) {
	panic("kernels: no assembly in this build")
}

func scaleAVX32(dst []float32, a float32, x []float32) { panic("kernels: no assembly in this build") }

func normGammaGradAVX32(acc []float64, x, dy []float32, mean, rstd float64) {
	panic("kernels: no assembly in this build")
}

func laneDotAVX32(x, y []float32, acc *[4]float64) { panic("kernels: no assembly in this build") }

func softmaxGradAVX32(dst, y, dy []float32, s float64) { panic("kernels: no assembly in this build") }

func rowsAVX32(op Op, dst, a, v []float32, left bool) { panic("kernels: no assembly in this build") }

func sumRowsAVX32(dst, x []float32) { panic("kernels: no assembly in this build") }

func accRowsAVX32(acc []float64, f float64, x []float32) { panic("kernels: no assembly in this build") }

func bnNormAVX32(dst, x, res, mean, a, beta []float32, floor float32) {
	panic("kernels: no assembly in this build")
}

func bnGradSumsAVX32(sdz, sdzx []float64, x, dy, y, mean []float32) {
	panic("kernels: no assembly in this build")
}

func bnGradAVX32(dst, x, dy, y, mean, k, ka, kb []float32, w float32) {
	panic("kernels: no assembly in this build")
}

func bnSumsAVX32(sum, sq []float64, w float64, x []float32) {
	panic("kernels: no assembly in this build")
}
