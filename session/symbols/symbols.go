package symbols

import "reflect"

//go:generate go run github.com/traefik/yaegi/cmd/yaegi extract -name symbols github.com/gotrain/gotrain/display
//go:generate go run github.com/traefik/yaegi/cmd/yaegi extract -name symbols github.com/gotrain/gotrain/data
//go:generate go run github.com/traefik/yaegi/cmd/yaegi extract -name symbols github.com/gotrain/gotrain/graph
//go:generate go run github.com/traefik/yaegi/cmd/yaegi extract -name symbols github.com/gotrain/gotrain/nn
//go:generate go run github.com/traefik/yaegi/cmd/yaegi extract -name symbols github.com/gotrain/gotrain/strategy
//go:generate go run gendocs.go

// Symbols maps "import/path/name" to the exported identifiers of that
// package, in the form interp.Interpreter.Use expects.
var Symbols = map[string]map[string]reflect.Value{}
