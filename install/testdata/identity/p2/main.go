// Plugin p2: checks p1's values against its own copy of a's types, and
// declares b's types for p3.
package main

import (
	"errors"
	"fmt"
	"reflect"

	"identity/a"
	"identity/b"
)

// selfer is an interface declared in this later plugin, naming a type of
// an earlier one: its method's type is this plugin's copy of func() a.T,
// which the runtime must match to p1's (the case that caught a patch that
// skipped collecting a module's types).
type selfer interface{ Self() a.T }

// Check returns one line per check of p1's values, types and error.
func Check(vals []any, err error, types []reflect.Type) []string {
	var out []string
	check := func(name string, ok bool) {
		if ok {
			out = append(out, "p2: "+name+": ok")
		} else {
			out = append(out, "p2: "+name+": FAIL")
		}
	}
	_, ok := vals[0].(a.T)
	check("assert a.T", ok)
	_, ok = vals[1].(*a.T)
	check("assert *a.T", ok)
	_, ok = vals[2].([]a.T)
	check("assert []a.T", ok)
	_, ok = vals[3].(map[string]*a.T)
	check("assert map[string]*a.T", ok)
	_, ok = vals[4].(a.Box[a.T])
	check("assert a.Box[a.T]", ok)
	_, ok = vals[5].(func(a.T) error)
	check("assert func(a.T) error", ok)
	_, ok = vals[6].([2]a.T)
	check("assert [2]a.T", ok)
	_, ok = vals[7].(chan a.T)
	check("assert chan a.T", ok)
	n, ok := vals[0].(a.Namer)
	check("assert a.Namer", ok && n.Name() == "t1")
	sf, ok := vals[0].(selfer)
	check("assert a.T to this plugin's interface naming a.T", ok && sf.Self().N == 1)
	check("reflect a.T Implements this plugin's interface naming a.T", types[0].Implements(reflect.TypeFor[selfer]()))
	switch vals[1].(type) {
	case *a.T:
		check("type switch *a.T", true)
	default:
		check("type switch *a.T", false)
	}
	var e *a.E
	check("errors.As *a.E", errors.As(err, &e) && e.Msg == "from p1")
	check("errors.As *a.E through b.Wrapped", errors.As(fmt.Errorf("w: %w", b.Wrapped{Err: e}), &e))
	mine := []reflect.Type{reflect.TypeFor[a.T](), reflect.TypeFor[*a.T](), reflect.TypeFor[[]a.T](), reflect.TypeFor[map[string]*a.T](),
		reflect.TypeFor[a.Box[a.T]](), reflect.TypeFor[func(a.T) error](), reflect.TypeFor[[2]a.T](), reflect.TypeFor[chan a.T](),
		reflect.TypeFor[a.Namer](), reflect.TypeFor[*a.E]()}
	for i, t := range mine {
		check("reflect.TypeFor equal "+t.String(), t == types[i])
	}
	check("reflect.TypeOf(p1's value) == a.T", reflect.TypeOf(vals[0]) == mine[0])
	check("reflect *a.T Implements a.Namer", types[1].Implements(mine[8]))
	check("reflect a.T AssignableTo p1's a.T", mine[0].AssignableTo(types[0]))
	check("reflect PointerTo(p1's a.T) == *a.T", reflect.PointerTo(types[0]) == mine[1])
	check("reflect SliceOf(a.T) == p1's []a.T", reflect.SliceOf(mine[0]) == types[2])
	v := reflect.New(types[0]).Interface()
	_, ok = v.(*a.T)
	check("reflect.New(p1's a.T) asserts to *a.T", ok)
	return out
}

// Values returns values of b's types, which p3 checks.
func Values() []any {
	var u b.UsesT = b.Holder{T: a.T{N: 6}}
	return []any{b.Holder{T: a.T{N: 7}}, &u, []b.UsesT{u}, b.Wrapped{Err: &a.E{Msg: "from p2"}}}
}

// Types returns reflect's view of b's types from p2.
func Types() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[b.UsesT](), reflect.TypeFor[b.Holder](), reflect.TypeFor[*b.UsesT](), reflect.TypeFor[[]b.UsesT](),
		reflect.TypeFor[func(b.UsesT) a.T]()}
}

func main() {}
