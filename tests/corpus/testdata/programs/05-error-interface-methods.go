package main

import (
	"errors"
	"fmt"
)

type temporary interface {
	temporary() bool
}

type retryable interface {
	error
	temporary
}

type netError struct {
	op      string
	attempt int
	temp    bool
}

func (e netError) Error() string { return fmt.Sprintf("%s failed (attempt %d)", e.op, e.attempt) }

func (e netError) temporary() bool { return e.temp }

func retry(op string, max int, fn func(int) error) error {
	for i := 1; ; i++ {
		err := fn(i)
		if err == nil {
			fmt.Printf("%s succeeded on attempt %d\n", op, i)
			return nil
		}
		var t temporary
		if !errors.As(err, &t) || !t.temporary() || i == max {
			return fmt.Errorf("giving up on %s: %w", op, err)
		}
		fmt.Println("retrying after:", err)
	}
}

var r retryable = netError{"x", 1, true}

func main() {
	err := retry("fetch", 5, func(i int) error {
		if i < 3 {
			return netError{"fetch", i, true}
		}
		return nil
	})
	fmt.Println(err)
	err = retry("upload", 5, func(i int) error { return netError{op: "upload", attempt: i} })
	fmt.Println(err)
	err = retry("ping", 2, func(i int) error { return netError{"ping", i, true} })
	fmt.Println(err)
	fmt.Println(r.temporary(), r)
}
