package main

import (
	"fmt"
)

type task struct {
	name string
	done bool
	prio int
}

var tasks []task

var refs []*task

func main() {
	for i, n := range []string{"write", "test", "ship"} {
		t := task{name: n, prio: i}
		tasks = append(tasks, t)
		t.done = true // changes the copy only
	}
	fmt.Println(tasks)
	for _, t := range tasks {
		t.prio *= 10
	}
	fmt.Println(tasks)
	for i := range tasks {
		tasks[i].prio *= 10
		tasks[i].done = i%2 == 0
	}
	fmt.Printf("%+v\n", tasks)
	for i := range tasks {
		refs = append(refs, &tasks[i])
	}
	refs[1].name = "review"
	tasks = append(tasks, task{name: "celebrate"})
	refs[0].name = "draft"
	fmt.Println(tasks[0].name, tasks[1].name, refs[0].name, len(tasks), *refs[2])
}
