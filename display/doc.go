// Package display lets code in a notebook cell show rich output: HTML,
// Markdown, SVG, PNG, JPEG, JSON, LaTeX and plain text, displays that are
// updated in place through a handle, and the live training monitor.
//
// The session installs a Sink once; everything shown goes to the cell that
// is running when it is shown. Outside a kernel (a plain Go program or a
// test) the default sink writes the text/plain form to standard output.
//
// A user type chooses its own representation by implementing Renderer; the
// session uses it for a cell's final value as well.
//
// # Values
//
// HTML, Markdown, SVG, PNG, JPEG, JSON, LaTeX, Text and Image return a
// Value, an immutable Renderer. A cell that ends with one shows it as its
// result; Show (or the Value's Show method) shows it at once. Every bundle
// this package produces or sends carries text/plain, so consoles and
// nbconvert's text export always have something to print. Input that cannot
// be encoded (bytes that are not a PNG, a NaN given to JSON) does not panic:
// the Value shows the error as text and its Err method returns it.
//
// # Updating in place
//
// A Handle names one output by a display id unique to the process and the
// kernel run. Its Update replaces that output's content through Jupyter's
// update_display_data, also from a later cell. Clear clears the running
// cell's output.
//
// # The training monitor
//
// A Monitor draws one progress line and one SVG line chart of the metrics
// passed to its Add, under one display id, throttled in time and in count
// so that a fast training loop sends a bounded number of updates; Done
// sends the final state. Each series keeps at most 500 points, merged
// pairwise as the run grows, so memory and the SVG stay small.
//
// # Conventions
//
// Everything in the package is safe for concurrent use. Show, Handle.Show,
// Handle.Update and Monitor.Add are safe points (see internal/safepoint):
// with an interrupt pending they panic with safepoint.ErrInterrupted, so a
// loop that shows output or trains stops; Monitor.Done is not, so a
// deferred Done still shows where the run stopped. Misuse panics with an
// error that wraps a package sentinel: a negative option value (ErrBadOption)
// or an Add after Done (ErrMonitorDone).
package display

// BUG(display): the monitor draws all series against one y axis, so an
// accuracy near 1 and a loss near 1e-3 share a scale; LogScale helps, two
// monitors separate them.

// BUG(display): the text/plain form of HTML is a tag-stripping
// approximation, not a rendering: tables lose their alignment, and a '<'
// followed by a letter in text is taken for a tag.
