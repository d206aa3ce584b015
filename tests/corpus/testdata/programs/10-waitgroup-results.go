package main

import (
	"fmt"
	"sync"
)

type result struct {
	input  int
	square int
	worker string
}

func compute(i int) result {
	return result{input: i, square: i * i, worker: fmt.Sprintf("w%d", i%3)}
}

var wg sync.WaitGroup

var wg2 sync.WaitGroup

func main() {
	inputs := []int{3, 1, 4, 1, 5, 9, 2, 6}
	results := make([]result, len(inputs))
	for i, n := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = compute(n)
		}()
	}
	wg.Wait()
	sum := 0
	for _, r := range results {
		fmt.Printf("%d^2=%d by %s\n", r.input, r.square, r.worker)
		sum += r.square
	}
	fmt.Println("sum", sum)
	lengths := make([]int, 3)
	for i, w := range []string{"go", "wait", "group"} {
		wg2.Go(func() { lengths[i] = len(w) })
	}
	wg2.Wait()
	fmt.Println(lengths)
}
