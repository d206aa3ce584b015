package gpu

import (
	"fmt"
	"sync"
	"unsafe"
)

// cublas holds cuBLAS's entry points, loaded at the first NewHandle.
var cublas struct {
	once sync.Once
	err  error // the load's outcome; immutable after once

	cublasCreate, cublasDestroy, cublasSetStream, cublasSetMathMode uintptr
	cublasSgemm, cublasDgemm                                        uintptr
	cublasSgemmBatched, cublasDgemmBatched                          uintptr
	cublasGetStatusName, cublasGetStatusString                      uintptr // optional
}

func loadCUBLAS() error {
	cublas.once.Do(func() {
		lib, err := openLibrary("GOTRAIN_LIBCUBLAS", "libcublas.so.13", "libcublas.so.12", "libcublas.so")
		if err != nil {
			cublas.err = err
			return
		}
		b := &cublas
		cublas.err = lib.bind([]symbol{
			{fn: &b.cublasCreate, name: "cublasCreate_v2"},
			{fn: &b.cublasDestroy, name: "cublasDestroy_v2"},
			{fn: &b.cublasSetStream, name: "cublasSetStream_v2"},
			{fn: &b.cublasSetMathMode, name: "cublasSetMathMode"},
			{fn: &b.cublasSgemm, name: "cublasSgemm_v2"},
			{fn: &b.cublasDgemm, name: "cublasDgemm_v2"},
			{fn: &b.cublasSgemmBatched, name: "cublasSgemmBatched"},
			{fn: &b.cublasDgemmBatched, name: "cublasDgemmBatched"},
			{fn: &b.cublasGetStatusName, name: "cublasGetStatusName", optional: true},
			{fn: &b.cublasGetStatusString, name: "cublasGetStatusString", optional: true},
		})
	})
	return cublas.err
}

// blasCheck turns a cublasStatus_t into an *Error, or nil for success.
func blasCheck(r uintptr, dev int, what string, args ...any) error {
	if r == 0 {
		return nil
	}
	e := &Error{Call: fmt.Sprintf(what, args...), Device: dev, Code: int(int32(r))}
	if cublas.cublasGetStatusName != 0 {
		e.Name = cstring(call(cublas.cublasGetStatusName, r))
	}
	if e.Name == "" {
		e.Name = fmt.Sprintf("cublasStatus_t(%d)", e.Code)
	}
	if cublas.cublasGetStatusString != 0 {
		e.Msg = cstring(call(cublas.cublasGetStatusString, r))
	}
	return e
}

// Handle is a cuBLAS handle bound to one stream: its calls run in that
// stream's order. It uses the default math mode (no TF32), so float32
// products round as IEEE single precision. A Handle is not safe for
// concurrent use; it must not be used after Destroy.
type Handle struct {
	s *Stream // immutable
	h uintptr // cublasHandle_t; immutable
}

// NewHandle creates a cuBLAS handle on s's device that enqueues on s.
func NewHandle(s *Stream) (*Handle, error) {
	if err := loadCUBLAS(); err != nil {
		return nil, err
	}
	leave, err := s.dev.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	h := &Handle{s: s}
	dev := s.dev.ordinal
	if err := blasCheck(call(cublas.cublasCreate, uintptr(unsafe.Pointer(&h.h))), dev, "cublasCreate_v2"); err != nil {
		return nil, err
	}
	if err := blasCheck(call(cublas.cublasSetStream, h.h, s.h), dev, "cublasSetStream_v2"); err != nil {
		call(cublas.cublasDestroy, h.h)
		return nil, err
	}
	const defaultMath = 0 // CUBLAS_DEFAULT_MATH
	if err := blasCheck(call(cublas.cublasSetMathMode, h.h, defaultMath), dev, "cublasSetMathMode(CUBLAS_DEFAULT_MATH)"); err != nil {
		call(cublas.cublasDestroy, h.h)
		return nil, err
	}
	return h, nil
}

// Stream returns the stream h enqueues on.
func (h *Handle) Stream() *Stream { return h.s }

// Destroy releases the handle.
func (h *Handle) Destroy() error {
	leave, err := h.s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	return blasCheck(call(cublas.cublasDestroy, h.h), h.s.dev.ordinal, "cublasDestroy_v2")
}

// checkGemm panics unless the row-major shapes are consistent.
func checkGemm(transA, transB bool, m, n, k, lda, ldb, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gpu: gemm with negative dimension m=%d n=%d k=%d", m, n, k))
	}
	colsA, colsB := k, n
	if transA {
		colsA = m
	}
	if transB {
		colsB = k
	}
	if lda < max(1, colsA) || ldb < max(1, colsB) || ldc < max(1, n) {
		panic(fmt.Sprintf("gpu: gemm leading dimensions lda=%d ldb=%d ldc=%d, want at least %d, %d, %d", lda, ldb, ldc, max(1, colsA), max(1, colsB), max(1, n)))
	}
}

func blasOp(t bool) uintptr {
	if t {
		return 1 // CUBLAS_OP_T
	}
	return 0 // CUBLAS_OP_N
}

// Gemm32 enqueues the row-major product
//
//	C = alpha·op(A)·op(B) + beta·C
//
// where op(A) is m×k (A stored k×m when transA), op(B) is k×n (B stored
// n×k when transB), C is m×n, and lda, ldb, ldc are the row strides of A, B
// and C in elements. cuBLAS is column-major, so it computes Cᵀ = op(B)ᵀ·op(A)ᵀ
// with the operands swapped. When beta is 0, C is not read. It panics if
// a dimension is negative or a leading dimension is too small.
func (h *Handle) Gemm32(transA, transB bool, m, n, k int, alpha float32, a Ptr, lda int, b Ptr, ldb int, beta float32, c Ptr, ldc int) error {
	return h.gemm(cublas.cublasSgemm, "cublasSgemm_v2", transA, transB, m, n, k, unsafe.Pointer(&alpha), a, lda, b, ldb, unsafe.Pointer(&beta), c, ldc)
}

// Gemm64 is Gemm32 in float64.
func (h *Handle) Gemm64(transA, transB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int) error {
	return h.gemm(cublas.cublasDgemm, "cublasDgemm_v2", transA, transB, m, n, k, unsafe.Pointer(&alpha), a, lda, b, ldb, unsafe.Pointer(&beta), c, ldc)
}

// gemm calls the column-major gemm fn for the row-major product; alpha and
// beta point to host scalars of the element type.
func (h *Handle) gemm(fn uintptr, name string, transA, transB bool, m, n, k int, alpha unsafe.Pointer, a Ptr, lda int, b Ptr, ldb int, beta unsafe.Pointer, c Ptr, ldc int) error {
	checkGemm(transA, transB, m, n, k, lda, ldb, ldc)
	leave, err := h.s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	r := call(fn, h.h, blasOp(transB), blasOp(transA), uintptr(n), uintptr(m), uintptr(k),
		uintptr(alpha), uintptr(b), uintptr(ldb), uintptr(a), uintptr(lda),
		uintptr(beta), uintptr(c), uintptr(ldc))
	return blasCheck(r, h.s.dev.ordinal, "%s(m=%d n=%d k=%d)", name, m, n, k)
}

// GemmBatched32 enqueues batch row-major products in one cuBLAS call:
//
//	C[i] = alpha·op(A[i])·op(B[i]) + beta·C[i]
//
// with the shapes and leading dimensions of Gemm32 for every i. a, b and c
// are device arrays of batch device pointers (8 bytes each) to the
// matrices; a matrix may appear several times in a or b (a broadcast
// operand), never in c. The arrays must stay on the device until the call
// has run on the stream. It panics if a dimension or batch is negative or a
// leading dimension is too small.
//
// It takes pointer arrays rather than strides (cublasSgemmStridedBatched)
// because that call's 18 parameters exceed what purego passes, and because
// the arrays express broadcast batches, which a stride cannot.
func (h *Handle) GemmBatched32(transA, transB bool, m, n, k int, alpha float32, a Ptr, lda int, b Ptr, ldb int, beta float32, c Ptr, ldc int, batch int) error {
	return h.gemmBatched(cublas.cublasSgemmBatched, "cublasSgemmBatched", transA, transB, m, n, k, unsafe.Pointer(&alpha), a, lda, b, ldb, unsafe.Pointer(&beta), c, ldc, batch)
}

// GemmBatched64 is GemmBatched32 in float64.
func (h *Handle) GemmBatched64(transA, transB bool, m, n, k int, alpha float64, a Ptr, lda int, b Ptr, ldb int, beta float64, c Ptr, ldc int, batch int) error {
	return h.gemmBatched(cublas.cublasDgemmBatched, "cublasDgemmBatched", transA, transB, m, n, k, unsafe.Pointer(&alpha), a, lda, b, ldb, unsafe.Pointer(&beta), c, ldc, batch)
}

// gemmBatched calls the column-major batched gemm fn as gemm calls its
// single product: operands swapped, so cuBLAS computes each Cᵀ.
func (h *Handle) gemmBatched(fn uintptr, name string, transA, transB bool, m, n, k int, alpha unsafe.Pointer, a Ptr, lda int, b Ptr, ldb int, beta unsafe.Pointer, c Ptr, ldc int, batch int) error {
	checkGemm(transA, transB, m, n, k, lda, ldb, ldc)
	if batch < 0 {
		panic(fmt.Sprintf("gpu: batched gemm with negative batch %d", batch))
	}
	leave, err := h.s.dev.enter()
	if err != nil {
		return err
	}
	defer leave()
	r := call(fn, h.h, blasOp(transB), blasOp(transA), uintptr(n), uintptr(m), uintptr(k),
		uintptr(alpha), uintptr(b), uintptr(ldb), uintptr(a), uintptr(lda),
		uintptr(beta), uintptr(c), uintptr(ldc), uintptr(batch))
	return blasCheck(r, h.s.dev.ordinal, "%s(m=%d n=%d k=%d batch=%d)", name, m, n, k, batch)
}
