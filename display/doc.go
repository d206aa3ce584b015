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
package display
