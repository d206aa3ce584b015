package main

import (
	"fmt"
	"strings"
)

func newMatrix(rows, cols int) [][]int {
	backing := make([]int, rows*cols)
	m := make([][]int, rows)
	for i := range m {
		m[i] = backing[i*cols : (i+1)*cols]
	}
	return m
}

func transpose(m [][]int) [][]int {
	t := newMatrix(len(m[0]), len(m))
	for i, row := range m {
		for j, v := range row {
			t[j][i] = v
		}
	}
	return t
}

func show(m [][]int) {
	for _, row := range m {
		fmt.Println(strings.Trim(fmt.Sprint(row), "[]"))
	}
}

func main() {
	m := newMatrix(2, 3)
	for i := range m {
		for j := range m[i] {
			m[i][j] = i*10 + j
		}
	}
	show(m)
	show(transpose(m))
	jagged := [][]string{{"a"}, {"b", "c"}, {}}
	jagged[2] = append(jagged[2], "d", "e", "f")
	for i, row := range jagged {
		fmt.Println(i, len(row), row)
	}
	m[0] = append(m[0], 99) // the first row now overwrites the second's backing array
	fmt.Println(m)
}
