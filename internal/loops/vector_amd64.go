//go:build !noasm

package loops

// hasAVX reports whether the CPU and the OS support 256-bit AVX registers.
var hasAVX = func() bool {
	_, _, ecx, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if ecx&osxsave == 0 || ecx&avx == 0 {
		return false
	}
	eax, _ := xgetbv()
	return eax&6 == 6 // the OS saves XMM and YMM state
}()

// hasAVX2 reports whether 256-bit integer instructions are usable too.
var hasAVX2 = func() bool {
	if !hasAVX {
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	return ebx&(1<<5) != 0
}()

// hasFMALoop reports whether FMAPeak's loop can run: AVX and FMA3.
var hasFMALoop = func() bool {
	_, _, ecx, _ := cpuid(1, 0)
	return hasAVX && ecx&(1<<12) != 0
}()

// hasFMALoop512 reports whether FMAPeak's 16-wide loop can run: AVX-512F,
// and an OS that saves the mask and upper ZMM registers.
var hasFMALoop512 = func() bool {
	if !hasFMALoop {
		return false
	}
	_, ebx, _, _ := cpuid(7, 0)
	eax, _ := xgetbv()
	return ebx&(1<<16) != 0 && eax&0xe6 == 0xe6
}()

// fmaLoop and fmaLoop512 run n iterations of FMAPeak's loop, 8 and 16
// lanes wide (peak_amd64.s).
func fmaLoop(n int)

func fmaLoop512(n int)

//go:noescape
func adamAVX32(w, g, m, v []float32, k *adamConsts[float32])

//go:noescape
func adamAVX64(w, g, m, v []float64, k *adamConsts[float64])

//go:noescape
func addAVX32(dst, a, b []float32)

//go:noescape
func addAVX64(dst, a, b []float64)

//go:noescape
func subAVX32(dst, a, b []float32)

//go:noescape
func subAVX64(dst, a, b []float64)

//go:noescape
func mulAVX32(dst, a, b []float32)

//go:noescape
func mulAVX64(dst, a, b []float64)

//go:noescape
func divAVX32(dst, a, b []float32)

//go:noescape
func divAVX64(dst, a, b []float64)

//go:noescape
func reluGradAVX32(out, y, dy []float32)

//go:noescape
func reluGradAVX64(out, y, dy []float64)

//go:noescape
func addReLUAVX32(dst, a, b []float32)

//go:noescape
func addReLUAVX64(dst, a, b []float64)

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

// adamVector runs the AVX loop over the longest prefix it handles and
// returns how many elements it updated.
func adamVector[T Float](w, g, m, v []T, k *adamConsts[T]) int {
	if !hasAVX {
		return 0
	}
	switch ws := any(w).(type) {
	case []float32:
		n := len(ws) &^ 7
		adamAVX32(ws[:n], any(g).([]float32)[:n], any(m).([]float32)[:n], any(v).([]float32)[:n], any(k).(*adamConsts[float32]))
		return n
	case []float64:
		n := len(ws) &^ 3
		adamAVX64(ws[:n], any(g).([]float64)[:n], any(m).([]float64)[:n], any(v).([]float64)[:n], any(k).(*adamConsts[float64]))
		return n
	}
	return 0
}

// addVector sums the longest prefix of a and b the AVX loop handles into
// dst and returns its length. dst and b are at least as long as a.
func addVector[T Float](dst, a, b []T) int {
	return vector3(hasAVX, dst, a, b, addAVX32, addAVX64)
}

// rowsAVX32 is RowsOpTo's loop (OpRowsTo's with left), for len(v) a
// multiple of 8.
func rowsAVX32(op Op, dst, a, v []float32, left bool) {
	i := 0
	if left {
		i = 1
	}
	rowsLoops[i][op](dst, a, v)
}

// rowsLoops are rowsAVX32's loops by side of the vector and Op.
var rowsLoops = [2][4]func(dst, a, v []float32){
	{addRowsAVX32, subRowsAVX32, mulRowsAVX32, divRowsAVX32},
	{rowsAddAVX32, rowsSubAVX32, rowsMulAVX32, rowsDivAVX32},
}

//go:noescape
func addRowsAVX32(dst, a, v []float32)

//go:noescape
func subRowsAVX32(dst, a, v []float32)

//go:noescape
func mulRowsAVX32(dst, a, v []float32)

//go:noescape
func divRowsAVX32(dst, a, v []float32)

//go:noescape
func rowsAddAVX32(dst, a, v []float32)

//go:noescape
func rowsSubAVX32(dst, a, v []float32)

//go:noescape
func rowsMulAVX32(dst, a, v []float32)

//go:noescape
func rowsDivAVX32(dst, a, v []float32)

//go:noescape
func sumRowsAVX32(dst, x []float32)

//go:noescape
func accRowsAVX32(acc []float64, f float64, x []float32)

// subVector, mulVector and divVector are addVector for SubTo, MulTo and
// DivTo.
func subVector[T Float](dst, a, b []T) int { return vector3(hasAVX, dst, a, b, subAVX32, subAVX64) }

func mulVector[T Float](dst, a, b []T) int { return vector3(hasAVX, dst, a, b, mulAVX32, mulAVX64) }

func divVector[T Float](dst, a, b []T) int { return vector3(hasAVX, dst, a, b, divAVX32, divAVX64) }

// reluGradVector runs ReLUGrad's AVX2 loop over the longest prefix it
// handles and returns its length. out and dy are at least as long as y.
func reluGradVector[T Float](out, y, dy []T) int {
	return vector3(hasAVX2, out, y, dy, reluGradAVX32, reluGradAVX64)
}

// addReLUVector runs AddReLU's AVX loop over the longest prefix it handles
// and returns its length. dst and b are at least as long as a.
func addReLUVector[T Float](dst, a, b []T) int {
	return vector3(hasAVX, dst, a, b, addReLUAVX32, addReLUAVX64)
}

// vector3 runs a 3-operand assembly loop, f32 or f64 by T, over the longest
// prefix of a that is a whole number of 32-byte vectors, if the CPU has
// what the loop needs (ok), and returns that prefix's length. T with a
// defined element type (not float32 or float64 itself) gets 0: Go loops.
func vector3[T Float](ok bool, dst, a, b []T, f32 func(dst, a, b []float32), f64 func(dst, a, b []float64)) int {
	if !ok {
		return 0
	}
	switch as := any(a).(type) {
	case []float32:
		n := len(as) &^ 7
		f32(any(dst).([]float32)[:n], as[:n], any(b).([]float32)[:n])
		return n
	case []float64:
		n := len(as) &^ 3
		f64(any(dst).([]float64)[:n], as[:n], any(b).([]float64)[:n])
		return n
	}
	return 0
}

//go:noescape
func geluAVX32(out, x []float32, k *polyConsts)

//go:noescape
func geluGradAVX32(out, x, dy []float32, k *polyConsts)

//go:noescape
func expSubAVX32(dst, x []float32, shift float32, acc *[8]float32, k *polyConsts)

//go:noescape
func maxAVX32(x []float32, acc *[8]float32)

//go:noescape
func laneSumAVX32(x []float32, acc *[4]float64)

//go:noescape
func laneSumSqDevAVX32(x []float32, mean float64, acc *[4]float64)

//go:noescape
func normGradSumsAVX32(x, dy, gamma []float32, mean, rstd float64, acc *[8]float64)

//go:noescape
func normAVX32(dst, x, gamma, beta []float32, mean, rstd float64)

//go:noescape
func normGradAVX32(dst, x, dy, gamma []float32, mean, rstd, mg, mgx float64)

//go:noescape
func scaleAVX32(dst []float32, a float32, x []float32)

//go:noescape
func normGammaGradAVX32(acc []float64, x, dy []float32, mean, rstd float64)

//go:noescape
func laneDotAVX32(x, y []float32, acc *[4]float64)

//go:noescape
func softmaxGradAVX32(dst, y, dy []float32, s float64)

//go:noescape
func bnNormAVX32(dst, x, res, mean, a, beta []float32, floor float32)

//go:noescape
func bnGradSumsAVX32(sdz, sdzx []float64, x, dy, y, mean []float32)

//go:noescape
func bnGradAVX32(dst, x, dy, y, mean, k, ka, kb []float32, w float32)

//go:noescape
func bnSumsAVX32(sum, sq []float64, w float64, x []float32)
