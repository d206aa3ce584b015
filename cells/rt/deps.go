package rt

import "github.com/gotrain/gotrain/internal/stepdeps"

// Dep is a session variable a cell's function reads, which a strategy
// watches so that reassigning it makes a traced step trace again.
type Dep = stepdeps.Dep

// Var describes the variable at p, named name in the cell.
func Var[T any](p *T, name string) Dep { return stepdeps.Var(p, name) }

// Deps records the session variables fn reads, directly or through the
// functions it calls, so that a strategy retraces a step function after
// one of them is reassigned. A cell's init calls it for the functions the
// cell declares; its statements call it after assigning a func literal to
// a top-level variable.
func Deps(fn any, name string, deps ...Dep) { stepdeps.Register(fn, name, deps...) }

// Code describes the slot at p through which every call of the function
// or method named name goes: a later cell that redefines it stores into
// the slot, and a step traced through the old body retraces.
func Code[T any](p *T, name string) Dep {
	d := stepdeps.Var(p, name)
	d.Code = true
	return d
}
