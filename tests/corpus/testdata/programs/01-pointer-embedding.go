package main

import (
	"fmt"
)

type logger struct {
	prefix string
	lines  []string
}

func (l *logger) logf(format string, args ...any) {
	l.lines = append(l.lines, l.prefix+fmt.Sprintf(format, args...))
}

func (l *logger) count() int { return len(l.lines) }

type service struct {
	*logger
	name  string
	calls int
}

func (s *service) handle(req string) {
	s.calls++
	s.logf("%s handled %q (call %d)", s.name, req, s.calls)
}

func main() {
	shared := &logger{prefix: "[app] "}
	users := &service{logger: shared, name: "users"}
	orders := &service{logger: shared, name: "orders"}
	users.handle("list")
	orders.handle("create")
	users.handle("get 7")
	fmt.Println(shared.count(), users.count(), orders.calls, users.calls)
	for i, l := range users.lines {
		fmt.Println(i, l)
	}
}
