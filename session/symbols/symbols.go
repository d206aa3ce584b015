package symbols

import "reflect"

//go:generate go run genextract.go github.com/gotrain/gotrain/display github.com/gotrain/gotrain/data github.com/gotrain/gotrain/graph github.com/gotrain/gotrain/nn github.com/gotrain/gotrain/strategy
//go:generate go run gendocs.go

// Symbols maps "import/path/name" to the exported identifiers of that
// package, in the form interp.Interpreter.Use expects.
var Symbols = map[string]map[string]reflect.Value{}
