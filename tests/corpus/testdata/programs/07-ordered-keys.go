package main

import (
	"cmp"
	"fmt"
	"slices"
)

type pair[K comparable, V any] struct {
	key K
	val V
}

func (p pair[K, V]) String() string { return fmt.Sprintf("%v=%v", p.key, p.val) }

func sortedPairs[K cmp.Ordered, V any](m map[K]V) []pair[K, V] {
	out := make([]pair[K, V], 0, len(m))
	for k, v := range m {
		out = append(out, pair[K, V]{k, v})
	}
	slices.SortFunc(out, func(a, b pair[K, V]) int { return cmp.Compare(a.key, b.key) })
	return out
}

func maxBy[T any, K cmp.Ordered](xs []T, key func(T) K) T {
	best := xs[0]
	for _, x := range xs[1:] {
		if key(x) > key(best) {
			best = x
		}
	}
	return best
}

func main() {
	stock := map[string]int{"pears": 4, "apples": 12, "figs": 7}
	byCode := map[int][]string{3: {"c"}, 1: {"a", "aa"}, 2: nil}
	fmt.Println(sortedPairs(stock))
	fmt.Println(sortedPairs(byCode))
	ps := sortedPairs(stock)
	best := maxBy(ps, func(p pair[string, int]) int { return p.val })
	longest := maxBy(ps, func(p pair[string, int]) int { return len(p.key) })
	fmt.Println(best, longest.key)
}
