//go:build cuda

package graph

// cudaBuild reports whether this build has NVIDIA devices; Conv2D builds
// the oneDNN conv ops only where it does not (conv.go): a device has no
// kernel for them, and a graph is built before it is compiled for one.
const cudaBuild = true
