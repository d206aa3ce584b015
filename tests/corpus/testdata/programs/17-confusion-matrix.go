package main

import (
	"fmt"
)

type confusion struct {
	labels []string
	counts map[[2]string]int
}

func newConfusion(labels ...string) *confusion {
	return &confusion{labels: labels, counts: map[[2]string]int{}}
}

func (c *confusion) add(actual, predicted string) { c.counts[[2]string{actual, predicted}]++ }

func (c *confusion) precision(l string) float64 {
	tp, fp := 0, 0
	for _, a := range c.labels {
		if a == l {
			tp += c.counts[[2]string{a, l}]
		} else {
			fp += c.counts[[2]string{a, l}]
		}
	}
	return float64(tp) / float64(tp+fp)
}

func (c *confusion) recall(l string) float64 {
	tp, fn := 0, 0
	for _, p := range c.labels {
		if p == l {
			tp += c.counts[[2]string{l, p}]
		} else {
			fn += c.counts[[2]string{l, p}]
		}
	}
	return float64(tp) / float64(tp+fn)
}

func main() {
	actual := []string{"cat", "dog", "cat", "bird", "dog", "dog", "cat", "bird", "cat", "dog"}
	predicted := []string{"cat", "dog", "dog", "bird", "dog", "cat", "cat", "cat", "cat", "dog"}
	cm := newConfusion("bird", "cat", "dog")
	correct := 0
	for i := range actual {
		cm.add(actual[i], predicted[i])
		if actual[i] == predicted[i] {
			correct++
		}
	}
	fmt.Printf("%6s", "")
	for _, p := range cm.labels {
		fmt.Printf("%6s", p)
	}
	fmt.Println()
	for _, a := range cm.labels {
		fmt.Printf("%6s", a)
		for _, p := range cm.labels {
			fmt.Printf("%6d", cm.counts[[2]string{a, p}])
		}
		fmt.Println()
	}
	fmt.Printf("accuracy %.2f\n", float64(correct)/float64(len(actual)))
	for _, l := range cm.labels {
		p, r := cm.precision(l), cm.recall(l)
		fmt.Printf("%-5s precision %.3f recall %.3f f1 %.3f\n", l, p, r, 2*p*r/(p+r))
	}
}
