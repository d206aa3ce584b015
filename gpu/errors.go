package gpu

import (
	"errors"
	"fmt"
	"os"
	"unsafe"
)

// ErrNotBuilt is returned by Init, Count and every entry point that needs
// the libraries when the binary was built without -tags cuda.
var ErrNotBuilt = errors.New("gpu: built without -tags cuda (rebuild with go build -tags cuda to use NVIDIA GPUs)")

// ErrNoNCCL is returned by CommInitAll when libnccl.so.2 could not be
// loaded; callers fall back to copies between devices.
var ErrNoNCCL = errors.New("gpu: NCCL is not available")

// ErrOutOfMemory is the category of an *Error whose call ran out of device
// memory (CUDA_ERROR_OUT_OF_MEMORY, CUBLAS_STATUS_ALLOC_FAILED): errors.Is
// reports it.
var ErrOutOfMemory = errors.New("gpu: out of device memory")

// Error is a call into CUDA, cuBLAS, NCCL or NVRTC that returned a status
// other than success. Its text names the call, the device and the status:
//
//	gpu: cuMemAlloc_v2(268435456 bytes) on device 1: CUDA_ERROR_OUT_OF_MEMORY: out of memory
type Error struct {
	Call   string // the call and its salient arguments, as "cuMemAlloc_v2(268435456 bytes)"
	Device int    // the device's ordinal, or -1 when the call concerns none
	Code   int    // the status the library returned (CUresult, cublasStatus_t, ncclResult_t, nvrtcResult)
	Name   string // the status's name, as "CUDA_ERROR_OUT_OF_MEMORY"
	Msg    string // the library's description of the status; may be empty
	Log    string // NVRTC's program log for a failed compile; else empty
}

func (e *Error) Error() string {
	s := "gpu: " + e.Call
	if e.Device >= 0 {
		s += fmt.Sprintf(" on device %d", e.Device)
	}
	s += ": " + e.Name
	if e.Msg != "" && e.Msg != e.Name {
		s += ": " + e.Msg
	}
	if e.Log != "" {
		s += "\n" + e.Log
	}
	return s
}

// Is reports whether target is ErrOutOfMemory and e ran out of memory.
func (e *Error) Is(target error) bool {
	return target == ErrOutOfMemory &&
		(e.Name == "CUDA_ERROR_OUT_OF_MEMORY" || e.Name == "CUBLAS_STATUS_ALLOC_FAILED")
}

// symbol is a C function to resolve into *fn.
type symbol struct {
	fn       *uintptr
	name     string
	optional bool // absent from some versions; *fn stays 0
}

// cstring copies the NUL-terminated C string at p.
func cstring(p uintptr) string {
	if p == 0 {
		return ""
	}
	// The conversion goes through memory so that vet's unsafeptr check,
	// meant for Go memory, does not flag a pointer that C returned.
	b := *(**byte)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(b), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(b, n))
}

// cbytes returns s as a NUL-terminated byte slice for C.
func cbytes(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

func getenv(k string) string { return os.Getenv(k) }
