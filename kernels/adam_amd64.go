//go:build !noasm

package kernels

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

//go:noescape
func adamAVX32(w, g, m, v []float32, k *adamConsts[float32])

//go:noescape
func adamAVX64(w, g, m, v []float64, k *adamConsts[float64])

//go:noescape
func addAVX32(dst, a, b []float32)

//go:noescape
func addAVX64(dst, a, b []float64)

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
	if !hasAVX {
		return 0
	}
	switch as := any(a).(type) {
	case []float32:
		n := len(as) &^ 7
		addAVX32(any(dst).([]float32)[:n], as[:n], any(b).([]float32)[:n])
		return n
	case []float64:
		n := len(as) &^ 3
		addAVX64(any(dst).([]float64)[:n], as[:n], any(b).([]float64)[:n])
		return n
	}
	return 0
}
