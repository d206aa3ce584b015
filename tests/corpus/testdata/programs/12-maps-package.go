package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

func main() {
	prices := map[string]float64{"tea": 2.5, "cake": 4, "juice": 3.25, "water": 1}
	copyOf := maps.Clone(prices)
	copyOf["tea"] = 3
	fmt.Println(prices["tea"], copyOf["tea"], maps.Equal(prices, copyOf))
	maps.DeleteFunc(copyOf, func(k string, v float64) bool { return v < 3 })
	fmt.Println(slices.Sorted(maps.Keys(copyOf)))
	upper := maps.Collect(func(yield func(string, float64) bool) {
		for k, v := range prices {
			if !yield(strings.ToUpper(k), v*2) {
				return
			}
		}
	})
	fmt.Println(upper)
	vals := slices.Sorted(maps.Values(prices))
	fmt.Println(vals)
	extra := map[string]float64{"soup": 5, "tea": 2.75}
	maps.Copy(prices, extra)
	fmt.Println(len(prices), prices)
}
