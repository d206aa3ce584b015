package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

type job struct {
	id   int
	text string
}

type outcome struct {
	jobID int
	words int
	upper string
}

func work(j job) outcome {
	return outcome{j.id, len(strings.Fields(j.text)), strings.ToUpper(j.text)}
}

var wg sync.WaitGroup

var collected []outcome

func main() {
	texts := []string{"a b c", "hello world", "one", "go runs goroutines", "", "x y"}
	jobs := make(chan job)
	results := make(chan outcome)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- work(j)
			}
		}()
	}
	go func() {
		for i, t := range texts {
			jobs <- job{i, t}
		}
		close(jobs)
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		collected = append(collected, r)
	}
	sort.Slice(collected, func(a, b int) bool { return collected[a].jobID < collected[b].jobID })
	total := 0
	for _, o := range collected {
		fmt.Printf("%d %d %q\n", o.jobID, o.words, o.upper)
		total += o.words
	}
	fmt.Println(len(collected), "jobs,", total, "words")
}
