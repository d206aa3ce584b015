package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

type set[T comparable] map[T]struct{}

func setOf[T comparable](xs ...T) set[T] {
	s := set[T]{}
	for _, x := range xs {
		s[x] = struct{}{}
	}
	return s
}

func (s set[T]) has(x T) bool {
	_, ok := s[x]
	return ok
}

func (s set[T]) union(o set[T]) set[T] {
	out := maps.Clone(s)
	maps.Copy(out, o)
	return out
}

func (s set[T]) intersect(o set[T]) set[T] {
	out := set[T]{}
	for x := range s {
		if o.has(x) {
			out[x] = struct{}{}
		}
	}
	return out
}

func sorted[T cmp.Ordered](s set[T]) []T {
	return slices.Sorted(maps.Keys(s))
}

func main() {
	a := setOf(1, 2, 3, 4)
	b := setOf(3, 4, 5)
	fmt.Println(sorted(a.union(b)), sorted(a.intersect(b)), a.has(2), b.has(2))
	words := setOf("go", "rust", "go", "zig")
	fmt.Println(len(words), sorted(words))
}
