//go:build noasm || !amd64

package kernels

// adamVector has no vector loop in this build.
func adamVector[T Float](w, g, m, v []T, k *adamConsts[T]) int { return 0 }
