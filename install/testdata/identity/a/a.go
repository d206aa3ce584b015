// Package a is linked into every plugin and not into the host, as an
// earlier cell's package is into every later cell's plugin: each plugin has
// its own copy of its types, which the runtime must match to the first.
package a

import "fmt"

// T is a named struct with a method.
type T struct{ N int }

// Name makes T a Namer.
func (t T) Name() string { return fmt.Sprint("t", t.N) }

// Self returns t: a method whose type names a.T, which a later plugin's
// interface may ask for.
func (t T) Self() T { return t }

// Namer is an interface declared with the types it is checked against.
type Namer interface{ Name() string }

// E is an error type, matched by errors.As.
type E struct{ Msg string }

func (e *E) Error() string { return "a: " + e.Msg }

// Box is generic: its instances are made in whichever plugin uses them.
type Box[V any] struct{ V V }
