package main

import (
	"errors"
	"fmt"
	"strings"
)

type panicError struct {
	value any
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func safely(f func() int) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{r}
		}
	}()
	return f(), nil
}

func main() {
	words := []string{"alpha", "beta"}
	results := []func() int{
		func() int { return len(words) },
		func() int { return len(words[3]) },
		func() int { return strings.Index(words[1], "t") },
		func() int {
			var m map[string][]int
			return m["x"][0]
		},
	}
	for i, f := range results {
		n, err := safely(f)
		var pe *panicError
		fmt.Println(i, n, err, errors.As(err, &pe))
	}
}
