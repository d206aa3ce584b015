package main

import (
	"errors"
	"fmt"
)

var errFatal = errors.New("fatal")

func inner(kind string) {
	switch kind {
	case "fatal":
		panic(errFatal)
	case "soft":
		panic("soft failure")
	}
	fmt.Println("inner ok")
}

func middle(kind string) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); ok && errors.Is(err, errFatal) {
				fmt.Println("middle: re-panicking", err)
				panic(fmt.Errorf("middle: %w", err))
			}
			fmt.Println("middle: handled", r)
		}
	}()
	inner(kind)
}

func outer(kind string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = r.(error)
		}
	}()
	middle(kind)
	return nil
}

func main() {
	for _, k := range []string{"none", "soft", "fatal"} {
		err := outer(k)
		fmt.Printf("%s -> %v (is fatal: %v)\n", k, err, errors.Is(err, errFatal))
	}
}
