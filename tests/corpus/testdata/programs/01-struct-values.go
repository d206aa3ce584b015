package main

import (
	"fmt"
)

type grid struct {
	cells [3][3]byte
	title string
}

type coord struct{ row, col int }

func main() {
	g1 := grid{title: "first"}
	for i := range 3 {
		g1.cells[i][i] = 'x'
	}
	g2 := g1
	g2.title = "second"
	g2.cells[0][2] = 'o'
	fmt.Printf("%s %q %s %q\n", g1.title, g1.cells[0][:], g2.title, g2.cells[0][:])
	fmt.Println(g1 == g2, g1.cells[1] == g2.cells[1])
	seen := map[coord]string{}
	seen[coord{0, 0}] = "origin"
	seen[coord{row: 2, col: 1}] = "knight"
	fmt.Println(seen[coord{2, 1}], len(seen), seen[coord{1, 1}] == "")
	anon := struct {
		label string
		at    coord
	}{"target", coord{4, 5}}
	fmt.Printf("%v %+v\n", anon, anon)
	pt := &anon.at
	pt.col = 9
	fmt.Println(anon.at.col, *pt)
}
