package main

import (
	"errors"
	"fmt"
)

var (
	errEmpty   = errors.New("empty")
	errTooLong = errors.New("too long")
	errSpace   = errors.New("contains space")
)

func validate(s string) error {
	var errs []error
	if s == "" {
		errs = append(errs, errEmpty)
	}
	if len(s) > 8 {
		errs = append(errs, fmt.Errorf("%q: %w", s, errTooLong))
	}
	for _, r := range s {
		if r == ' ' {
			errs = append(errs, errSpace)
			break
		}
	}
	return errors.Join(errs...)
}

func main() {
	for _, s := range []string{"gopher", "", "a very long name", "two words"} {
		err := validate(s)
		fmt.Printf("%q -> nil=%v long=%v space=%v\n", s, err == nil, errors.Is(err, errTooLong), errors.Is(err, errSpace))
		if err != nil {
			fmt.Println(err)
		}
	}
	both := fmt.Errorf("step failed: %w and %w", errEmpty, errSpace)
	fmt.Println(both, errors.Is(both, errEmpty), errors.Is(both, errSpace), errors.Is(both, errTooLong))
	fmt.Println(errors.Unwrap(both) == nil)
}
