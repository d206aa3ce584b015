// Package cells compiles the cells of a notebook session with the Go
// toolchain, each into a plugin that it loads into this process.
//
// # Use
//
// NewToolchain prepares the session's module; New starts a Compiler, whose
// Compile type-checks a cell against the earlier ones, builds it and loads
// it, and returns a Cell whose Run runs its statements. Package session
// drives it; generated code calls only package cells/rt.
//
// # Pipeline
//
// Compile (compiler.go) runs stages that call one way, each a function in
// a file named for it that takes the value the one before gave and gives
// the next:
//   - resolve (resolve.go, with split.go): the cell's source, split into
//     its imports, declarations and statements and parsed once, its
//     imports bound to names and built, the earlier types it adds methods
//     to found; gives a resolved;
//   - check (check.go, with topvars.go, objects.go and views.go):
//     type-checked against a view of the earlier cells' declarations
//     (views.go, parsed once per chunk of cells and kept while their
//     declarations stay the same), twice (its
//     variables' types first, then the cell as it compiles); gives a unit
//     holding what checking found and the objects describing its names;
//   - generate (gen.go, with promote.go, deps.go and bind.go): the unit's
//     file rewritten; gives the source of the package the cell compiles
//     to, its hash, and what its functions read and name;
//   - build (build.go, with toolchain.go): a source not built before,
//     compiled and linked as a plugin;
//   - load (load.go): the plugin opened, the cell's statements registered;
//   - commit (commit.go): the only writer of the session's tables: the
//     build under its hash, what its functions read and name, its
//     declarations made the newest of their names, its source remembered.
//
// Completion and inspection (complete.go) run resolve and check in their
// tolerant mode, which takes what parses and resolves of a cell being
// typed, checks it once as written and ignores its errors.
//
// errors.go holds the error types, positions.go the file set of one
// compilation and how it prints. deps.go and bind.go follow one concern
// through the stages that need it: bind.go's rebinding decisions are made
// while checking, its slots while generating, its notes while committing.
//
// # Late binding
//
// A name declared again keeps meaning one thing to every cell where Go
// allows it (bind.go):
//   - a top-level function, or a method of a type without type parameters,
//     declared again with the same signature (a method's receiver
//     included) is the one every caller runs, earlier cells' functions, its
//     own recursive calls, method values, interfaces and values made
//     before included; a method's type is not declared again;
//   - a variable declared again (:= or var) with the same type is the same
//     variable, given a fresh value, so earlier functions and closures see
//     the new value;
//   - anything else makes a new name for later cells: a function with
//     another signature, a variable with another type, a type, a constant,
//     a generic function; earlier functions keep the old one, and the
//     cell's Notices has one line naming them (none when no earlier
//     function uses the old one).
//
// A type declared anew (its fields, or a method added or of another
// signature: Go keeps a type's methods with the type, in its package, so
// such a cell declares the type again with all its methods) leaves
// stale what keeps the old type, directly or through others (stale.go):
// the note names it all, and a later cell that uses a stale name is
// refused with the line of the cell to run again.
//
// A step function watches the slots of the functions and methods it calls
// (deps.go), so that a strategy retraces it once one is redefined.
//
// # Invariants
//
// Every position in generated code points into the cell or is under
// `//line gotrain:1`. A failing cell changes nothing of the session. A
// build is reused for a cell whose generated source is the same.
//
// # Concurrency
//
// A Compiler's methods must not be called concurrently. A cell's Run may
// run while goroutines of earlier cells call its functions.
//
// # Errors
//
// Errors in a cell are an ErrorList with the cell's line and column; a
// panic inside the compiler becomes an error saying it is a gotrain bug.
package cells

// BUG(cells): A function's slot is written without synchronization when a
// cell declaring it runs, so a goroutine of an earlier cell calling the
// function meanwhile may run either definition.

// BUG(cells): What a function reads (deps.go) is found when it compiles,
// through the functions it calls then: a later cell's redefinition of a
// function it calls does not change what it was registered to read.
