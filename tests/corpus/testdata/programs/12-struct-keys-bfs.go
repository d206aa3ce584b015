package main

import (
	"fmt"
	"strings"
)

type pos struct{ r, c int }

func (p pos) neighbours() []pos {
	return []pos{{p.r - 1, p.c}, {p.r + 1, p.c}, {p.r, p.c - 1}, {p.r, p.c + 1}}
}

var start, end pos

func main() {
	maze := strings.Split(strings.TrimSpace(`
S.#.....
.##.###.
....#...
.##...#E`), "\n")
	for r, row := range maze {
		for c, ch := range row {
			switch ch {
			case 'S':
				start = pos{r, c}
			case 'E':
				end = pos{r, c}
			}
		}
	}
	fmt.Println(start, end)
	dist := map[pos]int{start: 0}
	queue := []pos{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, n := range p.neighbours() {
			if n.r < 0 || n.r >= len(maze) || n.c < 0 || n.c >= len(maze[0]) || maze[n.r][n.c] == '#' {
				continue
			}
			if _, seen := dist[n]; !seen {
				dist[n] = dist[p] + 1
				queue = append(queue, n)
			}
		}
	}
	fmt.Println("steps to exit:", dist[end], "cells reached:", len(dist))
}
