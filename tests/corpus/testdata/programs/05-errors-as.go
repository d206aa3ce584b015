package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

type parseError struct {
	line int
	msg  string
	err  error
}

func (e *parseError) Error() string {
	return fmt.Sprintf("line %d: %s", e.line, e.msg)
}

func (e *parseError) Unwrap() error { return e.err }

func parseNumbers(src string) ([]int, error) {
	var out []int
	for i, ln := range strings.Split(src, "\n") {
		if ln = strings.TrimSpace(ln); ln == "" {
			continue
		}
		n, err := strconv.Atoi(ln)
		if err != nil {
			return out, fmt.Errorf("parseNumbers: %w", &parseError{line: i + 1, msg: "bad number " + strconv.Quote(ln), err: err})
		}
		out = append(out, n)
	}
	return out, nil
}

var pe *parseError

var ne *strconv.NumError

func main() {
	nums, err := parseNumbers("1\n2\n\n 30 \n")
	fmt.Println(nums, err)
	nums, err = parseNumbers("4\nfive\n6")
	fmt.Println(nums, err)
	if errors.As(err, &pe) {
		fmt.Println("as parseError: line", pe.line, "msg", pe.msg)
	}
	if errors.As(err, &ne) {
		fmt.Println("as NumError:", ne.Func, ne.Num, ne.Err, errors.Is(err, strconv.ErrSyntax))
	}
}
