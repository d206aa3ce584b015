package main

import (
	"fmt"
	"slices"
	"strings"
)

type index map[string][]int

func (ix index) add(doc int, text string) {
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,!?")
		if ids := ix[w]; len(ids) == 0 || ids[len(ids)-1] != doc {
			ix[w] = append(ids, doc)
		}
	}
}

func (ix index) query(words ...string) []int {
	var result []int
	for i, w := range words {
		ids := ix[w]
		if i == 0 {
			result = slices.Clone(ids)
			continue
		}
		result = slices.DeleteFunc(result, func(id int) bool { return !slices.Contains(ids, id) })
	}
	return result
}

func main() {
	docs := []string{
		"The cat sat on the mat.",
		"A dog and a cat!",
		"The dog barked, the dog ran.",
		"Birds sing.",
	}
	ix := index{}
	for i, d := range docs {
		ix.add(i, d)
	}
	fmt.Println(ix["the"], ix["dog"], ix["cat"], ix["fish"])
	fmt.Println(ix.query("the", "dog"), ix.query("cat"), ix.query("cat", "dog", "a"), len(ix))
}
