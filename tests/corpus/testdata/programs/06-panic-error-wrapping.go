package main

import (
	"errors"
	"fmt"
	"strconv"
)

var errInvalid = errors.New("invalid input")

func mustParse(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Errorf("mustParse(%q): %w: %w", s, errInvalid, err))
	}
	return n
}

func sumAll(xs ...string) (total int, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	for _, x := range xs {
		total += mustParse(x)
	}
	return total, nil
}

var ne *strconv.NumError

func main() {
	fmt.Println(sumAll("1", "2", "3"))
	total, err := sumAll("4", "x", "6")
	fmt.Println(total, err)
	fmt.Println(errors.Is(err, errInvalid), errors.Is(err, strconv.ErrSyntax))
	fmt.Println(errors.As(err, &ne), ne.Num)
}
