package cells

import (
	"fmt"
	"go/printer"
	"go/token"
	"sort"
	"strings"
)

// cellPos returns the cell line and column of a position.
func (c *Compiler) cellPos(pos token.Pos) (int, int) {
	p := c.fset.PositionFor(pos, true)
	return p.Line, p.Column
}

// freshFileSet starts the positions of a new compilation or completion.
// No position of an earlier one is used after it: what later cells need of
// a cell (its views, the lines of its declarations) is kept as text, except
// the parsed views of earlier cells (viewFiles), which every set starts
// with. A file parsed later in the set lies past them all, so that views
// cached from different compilations never overlap.
func (c *Compiler) freshFileSet() {
	c.fset = token.NewFileSet()
	var files []*token.File
	for _, v := range c.views {
		files = append(files, v.pos...)
	}
	// AddExistingFiles wants them in order.
	sort.Slice(files, func(i, j int) bool { return files[i].Base() < files[j].Base() })
	c.fset.AddExistingFiles(files...)
}

// printNode prints an AST node as Go source.
func (c *Compiler) printNode(n any) string {
	var b strings.Builder
	cfg := printer.Config{Mode: printer.RawFormat}
	if err := cfg.Fprint(&b, c.fset, n); err != nil {
		panic(fmt.Sprintf("cells: printing %T: %v", n, err))
	}
	return b.String()
}

// printSourcePos prints a node with line directives giving its positions.
func (c *Compiler) printSourcePos(n any) string {
	var b strings.Builder
	cfg := printer.Config{Mode: printer.SourcePos | printer.UseSpaces, Tabwidth: 8}
	if err := cfg.Fprint(&b, c.fset, n); err != nil {
		panic(fmt.Sprintf("cells: printing %T: %v", n, err))
	}
	return b.String()
}
