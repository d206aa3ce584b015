// Plugin p3: checks p2's values against its own copy of b's types, which
// p2 declared first, and p1's against a's.
package main

import (
	"errors"
	"reflect"

	"identity/a"
	"identity/b"
)

// getter, tErr and meer are interfaces declared in this last plugin, naming
// a type of p1 or of p2, and met by types of p2.
type (
	getter interface{ Get() a.T }
	tErr   interface{ T() a.T }
	meer   interface{ Me() b.Holder }
)

// Check returns one line per check.
func Check(vals1, vals2 []any, types2 []reflect.Type) []string {
	var out []string
	check := func(name string, ok bool) {
		if ok {
			out = append(out, "p3: "+name+": ok")
		} else {
			out = append(out, "p3: "+name+": FAIL")
		}
	}
	_, ok := vals1[0].(a.T)
	check("assert p1's a.T", ok)
	u, ok := vals2[0].(b.UsesT)
	check("assert p2's b.Holder to b.UsesT", ok && u.Get().N == 7)
	gt, ok := vals2[0].(getter)
	check("assert p2's b.Holder to this plugin's interface naming a.T", ok && gt.Get().N == 7)
	me, ok := vals2[0].(meer)
	check("assert p2's b.Holder to this plugin's interface naming b.Holder", ok && me.Me().T.N == 7)
	switch vals2[0].(type) {
	case getter:
		check("type switch to this plugin's interface naming a.T", true)
	default:
		check("type switch to this plugin's interface naming a.T", false)
	}
	check("reflect p2's b.Holder Implements this plugin's interface", types2[1].Implements(reflect.TypeFor[getter]()))
	_, ok = vals2[0].(b.Holder)
	check("assert b.Holder", ok)
	pu, ok := vals2[1].(*b.UsesT)
	check("assert *b.UsesT", ok && (*pu).Get().N == 6)
	_, ok = vals2[2].([]b.UsesT)
	check("assert []b.UsesT", ok)
	var e *a.E
	err, _ := vals2[3].(error)
	check("errors.As *a.E from p2's b.Wrapped", errors.As(err, &e) && e.Msg == "from p2")
	var te tErr
	check("errors.As to this plugin's interface naming a.T", errors.As(err, &te) && te.T().N == 8)
	var w b.Wrapped
	check("errors.As b.Wrapped", errors.As(err, &w))
	mine := []reflect.Type{reflect.TypeFor[b.UsesT](), reflect.TypeFor[b.Holder](), reflect.TypeFor[*b.UsesT](), reflect.TypeFor[[]b.UsesT](),
		reflect.TypeFor[func(b.UsesT) a.T]()}
	for i, t := range mine {
		check("reflect.TypeFor equal "+t.String(), t == types2[i])
	}
	check("reflect b.Holder Implements p2's b.UsesT", mine[1].Implements(types2[0]))
	check("reflect p2's b.Holder Implements b.UsesT", types2[1].Implements(mine[0]))
	check("reflect b.UsesT method's result is a.T", mine[0].Method(0).Type.Out(0) == reflect.TypeFor[a.T]())
	return out
}

func main() {}
