// The host loads p1, p2 and p3 from the folder its argument names, in that
// order, as a gotrain worker loads cells, and prints every check's line.
// It links neither a nor b, as the worker links no cell's package.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"plugin"
	"reflect"
)

func lookup[F any](p *plugin.Plugin, name string) F {
	s, err := p.Lookup(name)
	if err != nil {
		panic(err)
	}
	return s.(F)
}

func main() {
	var ps []*plugin.Plugin
	for _, name := range []string{"p1", "p2", "p3"} {
		p, err := plugin.Open(filepath.Join(os.Args[1], name+".so"))
		if err != nil {
			fmt.Println("open", name, "FAIL:", err)
			os.Exit(1)
		}
		ps = append(ps, p)
	}
	vals1 := lookup[func() []any](ps[0], "Values")()
	err1 := lookup[func() error](ps[0], "Err")()
	types1 := lookup[func() []reflect.Type](ps[0], "Types")()
	for _, l := range lookup[func([]any, error, []reflect.Type) []string](ps[1], "Check")(vals1, err1, types1) {
		fmt.Println(l)
	}
	vals2 := lookup[func() []any](ps[1], "Values")()
	types2 := lookup[func() []reflect.Type](ps[1], "Types")()
	for _, l := range lookup[func([]any, []any, []reflect.Type) []string](ps[2], "Check")(vals1, vals2, types2) {
		fmt.Println(l)
	}
	// The host compares what the plugins' reflect gives with ==, as a
	// cell's code in the worker does through an interface.
	same := reflect.TypeOf(vals1[0]) == types1[0] && reflect.TypeOf(vals2[0]) == types2[1]
	fmt.Println("host: reflect.TypeOf of plugin values equal the plugins' types:", map[bool]string{true: "ok", false: "FAIL"}[same])
}
