package main

import (
	"fmt"
	"strconv"
)

func swap(a, b string) (string, string) { return b, a }

func minMax(xs []int) (lo, hi int, ok bool) {
	if len(xs) == 0 {
		return 0, 0, false
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs[1:] {
		lo = min(lo, x)
		hi = max(hi, x)
	}
	return lo, hi, true
}

func parsePair(s string) (int, int, error) {
	var a, b string
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			a, b = s[:i], s[i+1:]
			break
		}
	}
	x, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, err
	}
	y, err := strconv.Atoi(b)
	return x, y, err
}

func main() {
	x, y := swap("left", "right")
	fmt.Println(x, y)
	x, y = y, x
	fmt.Println(x, y)
	fmt.Println(minMax([]int{4, -2, 9, 0}))
	fmt.Println(minMax(nil))
	_, hi, _ := minMax([]int{3, 30, 13})
	fmt.Println(hi)
	for _, s := range []string{"3,4", "10,-2", "x,1", "5,"} {
		a, b, err := parsePair(s)
		fmt.Println(a, b, err)
	}
}
