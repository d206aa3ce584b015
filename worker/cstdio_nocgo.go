//go:build !cgo

package worker

// Without cgo no C code runs in the process, so there is no C stdio to
// configure or flush.
func lineBufferC() {}
func flushC()      {}
