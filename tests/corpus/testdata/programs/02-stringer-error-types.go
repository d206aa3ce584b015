package main

import (
	"fmt"
	"sort"
)

type level int

const (
	debug level = iota
	info
	warn
	fail
)

func (l level) String() string {
	switch l {
	case debug:
		return "DEBUG"
	case info:
		return "INFO"
	case warn:
		return "WARN"
	case fail:
		return "FAIL"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

type notFound struct {
	key string
}

func (e notFound) Error() string { return "not found: " + e.key }

func lookup(m map[string]level, k string) (level, error) {
	if l, ok := m[k]; ok {
		return l, nil
	}
	return 0, notFound{k}
}

func main() {
	levels := map[string]level{"verbose": debug, "normal": info, "quiet": warn}
	keys := []string{"normal", "loud", "quiet"}
	for _, k := range keys {
		l, err := lookup(levels, k)
		fmt.Printf("%s: %v %d err=%v\n", k, l, l, err)
	}
	all := []level{fail, debug, level(9), warn}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	fmt.Println(all)
	fmt.Printf("%v %s %q\n", levels, all[1], notFound{"x"})
}
