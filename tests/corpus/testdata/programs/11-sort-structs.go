package main

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

type runner struct {
	name    string
	country string
	time    float64
}

func main() {
	field := []runner{
		{"kip", "KEN", 125.3},
		{"ana", "ESP", 127.9},
		{"ole", "NOR", 125.3},
		{"bea", "KEN", 126.1},
		{"cai", "ESP", 125.9},
	}
	sort.Slice(field, func(i, j int) bool {
		if field[i].time != field[j].time {
			return field[i].time < field[j].time
		}
		return field[i].name < field[j].name
	})
	for i, r := range field {
		fmt.Printf("%d. %s %s %.1f\n", i+1, r.name, r.country, r.time)
	}
	slices.SortStableFunc(field, func(a, b runner) int { return strings.Compare(a.country, b.country) })
	fmt.Println(field)
	slices.SortFunc(field, func(a, b runner) int {
		return cmp.Or(cmp.Compare(b.time, a.time), cmp.Compare(a.name, b.name))
	})
	fmt.Println(field[0].name, field[len(field)-1].name)
	idx, ok := slices.BinarySearchFunc(field, 126.1, func(r runner, t float64) int { return cmp.Compare(t, r.time) })
	fmt.Println(idx, ok)
}
