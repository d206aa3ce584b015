package main

import (
	"fmt"
)

func main() {
	grid := [][]int{
		{1, 2, 3, 4},
		{5, 6, -1, 8},
		{9, 10, 11, 12},
	}
	target := 10
	found := false
search:
	for r, row := range grid {
		for c, v := range row {
			if v == target {
				fmt.Println("found", target, "at", r, c)
				found = true
				break search
			}
		}
	}
	fmt.Println(found)
	sums := []int{}
rows:
	for _, row := range grid {
		s := 0
		for _, v := range row {
			if v < 0 {
				fmt.Println("skipping row with", v)
				continue rows
			}
			s += v
		}
		sums = append(sums, s)
	}
	fmt.Println(sums)
	count := 0
	for i := 0; i < 5; i++ {
		for j := 0; j < 5; j++ {
			if j > i {
				break
			}
			if (i+j)%2 == 1 {
				continue
			}
			count++
		}
	}
	fmt.Println(count)
}
