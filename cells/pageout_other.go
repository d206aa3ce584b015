//go:build !cgo || !linux

package cells

// pageOut does nothing where MADV_PAGEOUT is not reached through cgo.
func pageOut(string) {}
