package main

import (
	"fmt"
)

type color int

const (
	red color = iota
	green
	blue
)

func (c color) String() string { return [...]string{"red", "green", "blue"}[c] }

type card struct {
	rank int
	suit string
}

func (c *card) String() string { return fmt.Sprintf("%d of %s", c.rank, c.suit) }

func main() {
	colors := []color{blue, red, green}
	byName := map[string]color{"sky": blue, "grass": green}
	byColor := map[color]int{red: 3, blue: 1}
	fmt.Println(colors, byName, byColor)
	fmt.Printf("%v %d %s %q\n", colors, colors, green, blue)
	fmt.Printf("%+v %#v\n", colors, green)
	c := card{10, "hearts"}
	fmt.Println(c, &c)
	hand := []*card{{1, "spades"}, {12, "clubs"}}
	fmt.Println(hand, []card{c})
	fmt.Printf("%v %s\n", hand[0], hand[1])
}
