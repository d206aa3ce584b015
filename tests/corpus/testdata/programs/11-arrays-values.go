package main

import (
	"fmt"
)

type board [3][3]rune

func (b board) withMove(r, c int, p rune) board {
	b[r][c] = p
	return b
}

func (b *board) place(r, c int, p rune) { b[r][c] = p }

func (b board) String() string {
	s := ""
	for _, row := range b {
		for _, c := range row {
			if c == 0 {
				c = '.'
			}
			s += string(c)
		}
		s += "\n"
	}
	return s
}

var b board

func main() {
	next := b.withMove(1, 1, 'X')
	fmt.Print(b, "--\n", next)
	b.place(0, 2, 'O')
	fmt.Print(b)
	a1 := [4]int{1, 2, 3}
	a2 := a1
	a2[3] = 4
	fmt.Println(a1, a2, a1 == a2, len(a1))
	s := a1[:]
	s[0] = 100
	fmt.Println(a1, [...]string{2: "c", 0: "a"}, len([...]int{5: 0}))
}
