// Package stepdeps records which session variables a notebook function
// reads, so that a strategy can tell when a traced step function's
// variables were reassigned, and trace it again.
//
// # Use
//
// The cell compiler (package cells) computes, for each function a cell
// declares, the top-level variables of the session it reads, directly or
// through the session functions it calls, and the generated code registers
// them through cells/rt: Register(fn, name, deps...). Package strategy calls
// Watch once when it traces a step function, snapshots the bytes of every
// variable it returns, and retraces when a snapshot no longer matches.
//
// A closure that was not registered (a func literal inside a registered
// function, the step_fn inside train_step pattern) is found through its
// enclosing function's name, as the Go runtime spells closures
// ("pkg.outer.func1"); a function inlined into another keeps its own short
// name in the closure's name ("pkg.caller.outer.func1"), which is looked up
// too. The answer for such a closure may hold more variables than it reads,
// never fewer than its enclosing functions register.
//
// # Invariants
//
// A Dep's Addr points at a package variable of a loaded cell, which lives
// as long as the process: no entry is ever removed. A function registered
// again (a cell run again registers its top-level func literals each time)
// replaces its entry.
//
// # Concurrency
//
// Register and Watch are safe for concurrent use; they take one mutex.
// Neither is on a step's path: registration happens when a cell loads or
// runs a top-level assignment, Watch when a step traces.
package stepdeps

// BUG(stepdeps): Only reassigning a variable is seen: a change inside the
// value it holds (a field set through a pointer, an element of a slice or
// a map) leaves its bytes as they were.

// BUG(stepdeps): A variable larger than MaxSize bytes is not watched.
