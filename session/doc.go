// Package session runs notebook cells in one persistent Go interpreter
// session (yaegi v0.16.1) and implements kernel.Executor for the kernel.
//
// Variables, functions, types, imports and goroutines live on from cell to
// cell. The session knows nothing of the Jupyter wire protocol: the kernel
// hands it a cell and a kernel.Output, and it streams what the cell prints,
// shows what the cell displays, and returns how the cell ended.
//
// # Cells
//
// yaegi takes either declarations or statements in one evaluation, never
// both, so a cell is cut into chunks of imports, declarations and
// statements, kept in order. Each chunk starts with a //line directive,
// which makes every position the parser or the interpreter reports a
// position in the cell itself. Imports already made are dropped, so a cell
// runs again without "redeclared" errors; a new alias of a path works.
//
// The session rewrites, in the source and on the same lines, what yaegi
// cannot run: range over an integer, the min, max and clear builtins, and
// the generic helpers of slices and maps that notebooks use daily
// (slices.Sort, SortFunc, Reverse, Max, Min, Equal, IndexFunc, Clone,
// Sorted, Collect; maps.Keys, Values, Clone). maps.Keys and maps.Values
// return slices rather than iterators. What cannot be rewritten (range
// over a function, other generic helpers) is refused with an error that
// names the construct. A type or method that an earlier cell declared
// differently is refused too: yaegi would silently keep the old one.
//
// yaegi types a cell's globals before running anything and cannot type an
// index into a value of compiled type: `second := parts[1]` after `parts :=
// strings.Split(s, ",")` fails with "constant definition loop", and `v, ok
// := m[k]` crashes its compiler. The session infers the static type of such
// a top-level define from the cell, the globals and the symbol tables,
// without running anything, and converts the value to it on the same line
// (`second := string(parts[1])`); a comma-ok define becomes declarations
// run first and an assignment. A type from a package the cells did not
// import is written through a hidden import (_gotrain_pkgN). Likewise a var
// declaration whose value uses a variable of an earlier cell, which yaegi
// refuses with "variable definition loop", is declared with its type and
// assigned right after its chunk. Error positions stay the cell's.
//
// A chunk that fails to compile leaves yaegi holding its globals with no
// value (a variable of an earlier cell it declared again reads as zero, a
// function returns zero values); the session refuses uses of them, naming
// the failed declaration, until a cell declares them again. Each import of
// a cell is made on its own, so a failing import does not hide the others.
// A cell that declares func main runs it once, as a program would.
//
// yaegi runs a cell's statements at package scope, where it gives all
// variables of one name a single slot whatever block declares them, and
// gives a loop one variable for all iterations, as Go did before 1.22. A
// compound statement of a cell that declares variables therefore runs as
// the body of a function literal called in place (scope.go), where blocks
// scope as in Go; tracebacks do not show that function. A loop whose
// variables a closure or an & captures declares a copy per iteration at
// the start of its body; in a three-clause loop whose body assigns the
// variable, the copy is written back before the post statement runs. The
// exceptions: a top-level statement with return, goto, defer or a branch
// to a label outside it keeps yaegi's scoping, and so does a three-clause
// loop variable that its body both assigns and redeclares, or whose body
// has a labelled continue.
//
// The yaegi the session runs is a patched copy (third_party/yaegi, its
// PATCHES.md lists each change): closures made in a loop and run on other
// goroutines no longer crash the process, a panic names its line, and
// `v, ok := m[k]` gives the zero value for a missing key.
//
// A go statement is rewritten so that a panic in the goroutine is printed
// on the cell's stderr ("session: panic in goroutine started at line N")
// instead of ending the kernel.
//
// # Output
//
// fmt.Print* in cells writes to the running cell's Output, from any
// goroutine (an output write is a safe point). Text written while no cell
// runs (by a goroutine an earlier cell started) is shown at the start of
// the next cell. os.Stdout and os.Stderr are the process's own files: the
// session runs in a worker process (package worker) that captures file
// descriptors 1 and 2 for the running cell. fmt.Scan and os.Stdin read
// lines through Output.Input. New installs a display.Sink that forwards to
// the running cell. The session is not sandboxed: cells see the process's
// real environment, and os.Exit ends the worker, as it ends a program.
//
// A cell's final expression becomes its result: a display.Renderer shows
// its own bundle, anything else its fmt %v text. Calls of the fmt print
// functions and calls without a result show nothing.
//
// # Inspection
//
// Inspect (Shift-Tab) and a `?name` cell show a signature and, below it,
// the identifier's doc comment: for gotrain's packages from the table
// passed as Options.Docs (symbols.Docs, built into the binary), for the
// standard library from its source under Options.GoRoot, read with
// PackageDocs on first use and kept per package, and for names the cells
// declared from the // comment lines right above the declaration. Where no
// doc is found, the signature stands alone.
//
// # Interrupts
//
// Interrupt raises internal/safepoint's flag. Output writes, time.Sleep
// and compiled library code that checks the flag stop the cell there with
// an "Interrupted" error, and the session stays intact. Cancelling yaegi's
// context instead makes closures created by earlier cells return zero
// values, so it is only the last resort: a second Interrupt that no safe
// point has seen leaves a cell blocked (say, on a channel) parked for good,
// and cancels the interpreter for a cell that computes without a safe
// point. Both replies advise restarting the kernel.
//
// # Concurrency
//
// Execute calls must not overlap. Complete, Inspect and IsComplete may run
// while no cell runs; Interrupt may be called at any time. The display sink
// and the interrupt flag are process-wide, so a process runs one Session at
// a time; Close restores the display sink New replaced.
//
// BUG(session): goroutines that outlive their cell and use global
// variables race with later cells, because yaegi grows its global frame
// without synchronization. Goroutines that keep to their own function's
// variables are safe.
//
// BUG(session): a value of an interpreted type is shown with %v: yaegi does
// not give interpreted types real methods, so neither their String method
// nor a display.Renderer implementation is seen.
//
// BUG(session): yaegi reports the position of a panic at the statement it
// was running, which for a panic inside an if is the if's condition.
//
// BUG(session): a go statement calling a builtin, or a variadic function
// whose parameters are unknown with xs..., evaluates its arguments in the
// new goroutine, not where the go statement runs.
//
// BUG(session): a top-level define that indexes a value of compiled type
// works only when the session can write the value's type (predeclared and
// exported types, and slices, maps, arrays, pointers, channels and
// functions of them); otherwise yaegi's error stands, explained. A
// comma-ok define on a value whose element may be a type the cells declared
// (type Celsius float64 is float64 to reflect) is left to yaegi, whose
// compiler fails on it.
//
// BUG(session): calling main() from a cell after a cell declared it does
// nothing: yaegi would run the declared main again before every later
// cell, so the session replaces it with an empty one once it has run.
//
// BUG(session): range over an integer expression n whose type the session
// cannot infer evaluates n three times; and a generic helper used to
// declare a global (m := slices.Max(xs)) needs a type the session can
// infer, or yaegi fails with "nil reflect type".
package session
