package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

type wc struct {
	word  string
	count int
}

var list []wc

func main() {
	text := `It was the best of times, it was the worst of times, it was the age of
wisdom, it was the age of foolishness, it was the epoch of belief.`
	counts := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		counts[w]++
	}
	fmt.Println(len(counts), counts["was"], counts["times"], counts["missing"])
	for w, c := range counts {
		list = append(list, wc{w, c})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].count != list[j].count {
			return list[i].count > list[j].count
		}
		return list[i].word < list[j].word
	})
	for _, e := range list[:6] {
		fmt.Printf("%-6s %d\n", e.word, e.count)
	}
}
