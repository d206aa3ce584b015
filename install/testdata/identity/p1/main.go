// Plugin p1, loaded first: it makes values of a's types.
package main

import (
	"reflect"

	"identity/a"
)

// Values returns values whose types p2, p3 and the host look at.
func Values() []any {
	return []any{a.T{N: 1}, &a.T{N: 2}, []a.T{{N: 3}}, map[string]*a.T{"k": {N: 4}}, a.Box[a.T]{V: a.T{N: 5}},
		func(a.T) error { return nil }, [2]a.T{}, make(chan a.T)}
}

// Err returns an *a.E as an error.
func Err() error { return &a.E{Msg: "from p1"} }

// Types returns reflect's view of a's types from p1.
func Types() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[a.T](), reflect.TypeFor[*a.T](), reflect.TypeFor[[]a.T](), reflect.TypeFor[map[string]*a.T](),
		reflect.TypeFor[a.Box[a.T]](), reflect.TypeFor[func(a.T) error](), reflect.TypeFor[[2]a.T](), reflect.TypeFor[chan a.T](),
		reflect.TypeFor[a.Namer](), reflect.TypeFor[*a.E]()}
}

func main() {}
