package main

import (
	"fmt"
)

type row struct {
	item  string
	qty   int
	price float64
}

func main() {
	rows := []row{{"apple", 3, 0.5}, {"watermelon", 1, 3.25}, {"fig", 12, 0.125}}
	fmt.Printf("|%-12s|%5s|%9s|\n", "item", "qty", "price")
	for _, r := range rows {
		fmt.Printf("|%-12s|%5d|%9.3f|\n", r.item, r.qty, r.price)
	}
	fmt.Printf("|%*s|%-*d|%.*f|\n", 6, "dyn", 4, 7, 2, 3.14159)
	n := 255
	fmt.Printf("%d %5d %-5d| %05d %x %X %#x %o %#o %b %+d\n", n, n, n, n, n, n, n, n, n, n, n)
	f := 1234.5678
	fmt.Printf("%f %.2f %8.1f %e %E %g %G %.3g\n", f, f, f, f, f, f, f, f)
	fmt.Printf("%t %v %q %c %U %x % x\n", true, false, "hi\n", 'G', 'é', "hey", "hey")
	fmt.Printf("%6.2f%% %s %v %d\n", 12.345, []byte("ab"), []byte("ab"), []byte("ab"))
	format := "%d %!|%z|%d\n"
	fmt.Printf(format, 1, 2)
}
