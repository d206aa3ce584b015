package main

import (
	"fmt"
)

type cache[K comparable, V any] struct {
	data   map[K]V
	order  []K
	limit  int
	hits   int
	misses int
	load   func(K) V
}

func newCache[K comparable, V any](limit int, load func(K) V) *cache[K, V] {
	return &cache[K, V]{data: map[K]V{}, limit: limit, load: load}
}

func (c *cache[K, V]) get(k K) V {
	if v, ok := c.data[k]; ok {
		c.hits++
		return v
	}
	c.misses++
	v := c.load(k)
	if len(c.order) == c.limit {
		oldest := c.order[0]
		c.order = c.order[1:]
		delete(c.data, oldest)
	}
	c.data[k] = v
	c.order = append(c.order, k)
	return v
}

type key struct{ a, b string }

func main() {
	squares := newCache(3, func(n int) int {
		fmt.Println("  computing", n)
		return n * n
	})
	for _, k := range []int{2, 3, 2, 4, 5, 2, 5} {
		fmt.Println(k, squares.get(k))
	}
	fmt.Println(squares.hits, squares.misses, squares.order)
	joined := newCache(2, func(k key) string { return k.a + "+" + k.b })
	fmt.Println(joined.get(key{"x", "y"}), joined.get(key{"x", "y"}))
	fmt.Println(joined.hits, joined.misses)
}
