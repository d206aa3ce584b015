package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

func counter(ctx context.Context, stopped chan<- string) <-chan int {
	out := make(chan int)
	go func() {
		defer close(out)
		for i := 0; ; i++ {
			select {
			case out <- i:
			case <-ctx.Done():
				stopped <- fmt.Sprint("counter stopped: ", ctx.Err())
				return
			}
		}
	}()
	return out
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan string, 1)
	vals := counter(ctx, stopped)
	for v := range vals {
		fmt.Print(v, " ")
		if v == 4 {
			break
		}
	}
	fmt.Println()
	cancel()
	fmt.Println(<-stopped)
	fmt.Println(ctx.Err(), errors.Is(ctx.Err(), context.Canceled))
	tctx, tcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer tcancel()
	<-tctx.Done()
	fmt.Println(tctx.Err(), errors.Is(tctx.Err(), context.DeadlineExceeded))
	vctx := context.WithValue(context.Background(), "user", "ann")
	fmt.Println(vctx.Value("user"), vctx.Value("missing"))
}
