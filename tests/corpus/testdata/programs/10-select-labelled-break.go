package main

import (
	"fmt"
)

func produce(n int, prefix string) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		for i := 0; i < n; i++ {
			ch <- fmt.Sprintf("%s%d", prefix, i)
		}
	}()
	return ch
}

var got []string

func main() {
	nums := produce(5, "n")
	done := make(chan struct{})
loop:
	for {
		select {
		case v, ok := <-nums:
			if !ok {
				close(done)
				nums = nil
				continue
			}
			got = append(got, v)
		case <-done:
			fmt.Println("done signalled")
			break loop
		}
	}
	fmt.Println(got)
	letters := produce(10, "L")
	count := 0
outer:
	for v := range letters {
		switch {
		case v == "L3":
			continue outer
		case v == "L6":
			break outer
		}
		count++
		fmt.Print(v, " ")
	}
	fmt.Println(count)
	for range letters {
	}
}
