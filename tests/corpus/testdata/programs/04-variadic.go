package main

import (
	"fmt"
	"strings"
)

func sum(nums ...int) int {
	t := 0
	for _, n := range nums {
		t += n
	}
	return t
}

func joinWith(sep string, parts ...string) string {
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, sep)
}

func logf(prefix string, format string, args ...any) {
	fmt.Printf(prefix+format+"\n", args...)
}

func main() {
	fmt.Println(sum(), sum(1), sum(1, 2, 3))
	nums := []int{10, 20, 30}
	fmt.Println(sum(nums...), sum(nums[1:]...))
	fmt.Println(joinWith("-"), joinWith("-", "a"), joinWith(", ", "x", "y", "z"))
	words := strings.Fields("go is fun")
	fmt.Println(joinWith("_", words...))
	logf("[info] ", "%d words, first %q", len(words), words[0])
	logf("[warn] ", "no args")
	all := append([]int{1}, nums...)
	fmt.Println(all, len(all))
}
