package main

import (
	"fmt"
)

var nilCh chan int

func main() {
	ch := make(chan string, 3)
	ch <- "a"
	ch <- "b"
	fmt.Println(len(ch), cap(ch))
	ch <- "c"
	close(ch)
	for s := range ch {
		fmt.Print(s)
	}
	fmt.Println()
	v, ok := <-ch
	fmt.Printf("%q %v %d\n", v, ok, len(ch))
	sem := make(chan struct{}, 2)
	sent := 0
	for i := 0; i < 4; i++ {
		select {
		case sem <- struct{}{}:
			sent++
		default:
			fmt.Println("full at", i)
		}
	}
	<-sem
	select {
	case sem <- struct{}{}:
		fmt.Println("room again")
	default:
		fmt.Println("still full")
	}
	select {
	case x := <-nilCh:
		fmt.Println("impossible", x)
	default:
		fmt.Println("nil channel never ready", sent)
	}
}
