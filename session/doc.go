// Package session is the user's live Go session behind kernel.Executor:
// each cell is compiled by the Go toolchain and run in this process, which
// is a worker the kernel started (package worker), never the kernel.
//
// Package cells does the compiling: it type-checks a cell against the
// session's earlier cells, generates a package of it, builds that as a
// plugin and loads it. Variables, functions, types and goroutines live on
// from cell to cell, with the semantics of the Go compiler. The session
// adds what a notebook needs around that:
//
//   - a cell's statements run on a goroutine of their own; an interrupt
//     stops them at the next safe point (loop iterations, function entries,
//     sleeps, training steps), and a second interrupt abandons a cell
//     blocked where none runs;
//   - a panic becomes an error showing the cell's frames with the cell's
//     line numbers, and a panic in a goroutine a cell started is reported
//     while the session goes on, naming the cell (by its execution count)
//     and line of its innermost cell frame and of the go statement;
//   - the final expression of a cell is its result, shown through its
//     display.Renderer or as %v;
//   - stdin (os.Stdin, fmt.Scan) reads the front end's input box, and
//     package display shows into the running cell;
//   - `?name` shows help; GoGet (the worker's `%go get MODULE@VERSION`)
//     adds a module to the session's go.mod (ModuleFile, which `%go mod`
//     shows), whose packages cells may import;
//   - completion and inspection come from go/types over the session's
//     cells and imports, and docs from the packages' source.
//
// What cells print to stdout and stderr goes to the process's file
// descriptors, which the worker captures.
package session
