package main

import (
	"fmt"
)

var nilMap map[string]int

func main() {
	stock := map[string]int{"apple": 5, "pear": 0, "plum": 2}
	for _, k := range []string{"apple", "pear", "kiwi"} {
		n, ok := stock[k]
		fmt.Printf("%s: %d %v\n", k, n, ok)
	}
	delete(stock, "pear")
	delete(stock, "nothing")
	stock["kiwi"]++
	fmt.Println(len(stock), stock)
	if _, ok := stock["pear"]; !ok {
		fmt.Println("pear is gone")
	}
	fmt.Println(nilMap["x"], len(nilMap))
	delete(nilMap, "x")
	clear(stock)
	fmt.Println(len(stock), stock == nil)
	stock["fresh"] = 1
	fmt.Println(stock)
}
