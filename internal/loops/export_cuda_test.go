//go:build cuda

package loops

// DeviceCompiles returns how many times the device optimizer kernels'
// programs have been compiled in this process.
func DeviceCompiles() int64 { return loaded.compiles.Load() }
