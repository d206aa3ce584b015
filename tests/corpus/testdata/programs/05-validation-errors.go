package main

import (
	"fmt"
	"strings"
)

type fieldError struct {
	field, problem string
}

type validationErrors []fieldError

func (v validationErrors) Error() string {
	parts := make([]string, len(v))
	for i, f := range v {
		parts[i] = f.field + ": " + f.problem
	}
	return fmt.Sprintf("%d problem(s): %s", len(v), strings.Join(parts, "; "))
}

type user struct {
	name  string
	email string
	age   int
}

func (u user) validate() error {
	var errs validationErrors
	if u.name == "" {
		errs = append(errs, fieldError{"name", "required"})
	}
	if !strings.Contains(u.email, "@") {
		errs = append(errs, fieldError{"email", "missing @"})
	}
	if u.age < 0 || u.age > 150 {
		errs = append(errs, fieldError{field: "age", problem: fmt.Sprintf("%d out of range", u.age)})
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func main() {
	users := []user{
		{"ann", "ann@example.com", 30},
		{"", "nobody", 200},
		{name: "cy", email: "cy@x", age: -1},
	}
	for _, u := range users {
		if err := u.validate(); err != nil {
			fmt.Println(u.name, "->", err)
			if ve, ok := err.(validationErrors); ok {
				fmt.Println("  first:", ve[0].field)
			}
			continue
		}
		fmt.Println(u.name, "ok")
	}
}
