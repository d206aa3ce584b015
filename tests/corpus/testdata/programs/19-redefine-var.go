package main

import "fmt"

func main() {
	limit := 10
	items := []int{3, 8, 12, 15, 4}
	count := 0
	for _, it := range items {
		if it < limit {
			count++
		}
	}
	fmt.Println("below", limit, "->", count)
	// The second cell redefines limit with the same type.
	limit = 13
	count = 0
	for _, it := range items {
		if it < limit {
			count++
		}
	}
	fmt.Println("below", limit, "->", count)
	{
		// The third cell redefines items with another type.
		items := "now a string"
		fmt.Println(len(items), items, limit)
	}
}
