package main

import (
	"fmt"
	"maps"
	"slices"
)

type sale struct {
	region, product string
	units           int
}

func main() {
	sales := []sale{
		{"north", "tea", 3}, {"south", "tea", 5}, {"north", "coffee", 7},
		{"north", "tea", 1}, {"east", "cocoa", 2}, {"south", "coffee", 4},
	}
	byRegion := map[string]map[string]int{}
	for _, s := range sales {
		inner, ok := byRegion[s.region]
		if !ok {
			inner = map[string]int{}
			byRegion[s.region] = inner
		}
		inner[s.product] += s.units
	}
	for _, r := range slices.Sorted(maps.Keys(byRegion)) {
		fmt.Print(r, ":")
		for _, p := range slices.Sorted(maps.Keys(byRegion[r])) {
			fmt.Printf(" %s=%d", p, byRegion[r][p])
		}
		fmt.Println()
	}
	fmt.Println(byRegion["west"]["tea"], len(byRegion["west"]), byRegion)
}
