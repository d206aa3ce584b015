package main

import (
	"fmt"
)

var count int

func main() {
	for i := range 3 {
		fmt.Print(i, " ")
	}
	fmt.Println()
	for i, r := range "aé😀" {
		fmt.Print(i, ":", string(r), " ")
	}
	fmt.Println()
	ch := make(chan int, 3)
	ch <- 1
	ch <- 2
	ch <- 3
	close(ch)
	total := 0
	for v := range ch {
		total += v
	}
	arr := [3]string{"x", "y", "z"}
	for i := range arr {
		arr[i] += "!"
	}
	fmt.Println(total, arr)
	nums := []int{1, 2, 3}
	for i, n := range nums {
		if i == 0 {
			nums = append(nums, 100)
			nums[2] = 30
		}
		fmt.Print(n, " ")
	}
	fmt.Println(len(nums))
	for range 4 {
		count++
	}
	n := 3
	for n > 0 {
		n--
	}
	fmt.Println(count, n)
}
