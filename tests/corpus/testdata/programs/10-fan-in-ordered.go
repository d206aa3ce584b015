package main

import (
	"fmt"
	"sync"
)

type msg struct {
	src string
	seq int
}

func source(name string, n int) <-chan msg {
	ch := make(chan msg)
	go func() {
		defer close(ch)
		for i := 1; i <= n; i++ {
			ch <- msg{name, i}
		}
	}()
	return ch
}

func merge(chans ...<-chan msg) <-chan msg {
	out := make(chan msg)
	var wg sync.WaitGroup
	for _, c := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range c {
				out <- m
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

func main() {
	perSource := map[string][]int{}
	total := 0
	for m := range merge(source("a", 3), source("b", 5), source("c", 1)) {
		perSource[m.src] = append(perSource[m.src], m.seq)
		total++
	}
	fmt.Println(total, perSource)
}
