package main

import (
	"errors"
	"fmt"
)

type validationError struct {
	field string
}

func (e *validationError) Error() string {
	if e == nil {
		return "<nil validationError>"
	}
	return "invalid " + e.field
}

func checkBad(name string) error {
	var err *validationError
	if name == "" {
		err = &validationError{"name"}
	}
	return err // a typed nil pointer in an interface is not nil
}

func checkGood(name string) error {
	if name == "" {
		return &validationError{"name"}
	}
	return nil
}

var target *validationError

func main() {
	e1 := checkBad("bob")
	e2 := checkGood("bob")
	fmt.Println(e1 == nil, e2 == nil)
	fmt.Printf("%v | %T | %v | %T\n", e1, e1, e2, e2)
	fmt.Println(errors.As(e1, &target), target == nil)
	fmt.Println(checkBad(""), checkGood(""))
	if e, ok := e1.(*validationError); ok {
		fmt.Println("asserted:", e == nil)
	}
}
