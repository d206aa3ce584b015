//go:build noasm || !amd64

package kernels

// adamVector and addVector have no vector loops in this build.
func adamVector[T Float](w, g, m, v []T, k *adamConsts[T]) int { return 0 }

func addVector[T Float](dst, a, b []T) int { return 0 }
