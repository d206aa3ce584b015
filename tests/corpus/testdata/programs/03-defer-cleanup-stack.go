package main

import (
	"errors"
	"fmt"
)

type resource struct {
	name string
	log  *[]string
}

func open(name string, log *[]string) *resource {
	*log = append(*log, "open "+name)
	return &resource{name, log}
}

func (r *resource) close() { *r.log = append(*r.log, "close "+r.name) }

func process(fail bool) (log []string, err error) {
	db := open("db", &log)
	defer db.close()
	file := open("file", &log)
	defer file.close()
	if fail {
		return log, errors.New("processing failed")
	}
	cache := open("cache", &log)
	defer cache.close()
	log = append(log, "work")
	return log, nil
}

func main() {
	log, err := process(false)
	fmt.Println(log, err)
	log, err = process(true)
	fmt.Println(log, err)
}
