//go:build !cuda

package graph

// cudaBuild reports whether this build has NVIDIA devices; Conv2D builds
// the oneDNN conv ops only where it does not (conv.go).
const cudaBuild = false
