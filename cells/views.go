package cells

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"sort"
	"strings"
)

// The checking view of the session: the live declarations of earlier cells
// as parsed files, which check type-checks a new cell against. Parsed views
// are kept by chunk of cells (Compiler.views) and reused while the chunk's
// live objects stay the same. That cache is a memo, not a session table:
// check fills it on demand, and commit, the only writer of the live
// objects, need not touch it, because viewFiles compares each cached chunk
// with the live objects (chunkView.holds) before using it.

// chunkView is the checking view of a chunk of earlier cells: the cells
// with live objects, in order, the objects each declares, in name order,
// and their parsed declarations.
type chunkView struct {
	cells []*Cell
	objs  [][]*object
	files []*ast.File
	pos   []*token.File
}

// holds reports whether v is the view of cells, each declaring byCell's.
func (v chunkView) holds(cells []*Cell, byCell map[*Cell][]*object) bool {
	if !slices.Equal(v.cells, cells) {
		return false
	}
	for i, cell := range cells {
		if !slices.Equal(v.objs[i], byCell[cell]) {
			return false
		}
	}
	return true
}

// viewChunk is how many cells, numbered consecutively, share a view file:
// checking one file per earlier cell cost a file scope and its imports per
// cell, and grew with the session.
const viewChunk = 64

// viewFiles returns the source of the checking view of the session: the
// live declarations of earlier cells, all in one package, so that a new
// cell sees unexported names and types as one program would. Names the new
// cell declares are left out, so it may redefine them. Each cell's part
// starts with a line directive naming it (its path and viewSuffix), which
// isView and typeKey read. The cells of a chunk share a file unless their
// imports bind one name to two packages; a chunk is parsed again only when
// the objects of one of its cells differ from the cached view's.
func (c *Compiler) viewFiles(skip map[string]bool) []*ast.File {
	byCell := map[*Cell][]*object{}
	liveChunks := map[int64]bool{}
	chunks := map[int64][]*Cell{}
	for _, o := range c.live {
		liveChunks[o.cell.seq/viewChunk] = true
		// A method goes with its type: a cell declaring the type anew
		// declares the methods it has.
		if skip[o.name] || (o.kind == objMethod && skip[recvOf(o.name)]) {
			continue
		}
		if byCell[o.cell] == nil {
			k := o.cell.seq / viewChunk
			chunks[k] = append(chunks[k], o.cell)
		}
		byCell[o.cell] = append(byCell[o.cell], o)
	}
	keys := make([]int64, 0, len(chunks))
	for k, cells := range chunks {
		keys = append(keys, k)
		slices.SortFunc(cells, func(a, b *Cell) int { return cmp.Compare(a.seq, b.seq) })
		for _, cell := range cells {
			objs := byCell[cell]
			sort.Slice(objs, func(i, j int) bool { return objs[i].name < objs[j].name })
		}
	}
	slices.Sort(keys)
	var files []*ast.File
	for _, k := range keys {
		cells := chunks[k]
		v, ok := c.views[k]
		if !ok || !v.holds(cells, byCell) {
			v = c.parseChunk(k, cells, byCell)
			c.views[k] = v
		}
		files = append(files, v.files...)
	}
	// Chunks with no live object left go.
	for k := range c.views {
		if !liveChunks[k] {
			delete(c.views, k)
		}
	}
	return files
}

// parseChunk parses the views of chunk k's cells, each declaring byCell's:
// one file for consecutive cells whose imports do not bind a name to two
// packages.
func (c *Compiler) parseChunk(k int64, cells []*Cell, byCell map[*Cell][]*object) chunkView {
	v := chunkView{cells: cells}
	for _, cell := range cells {
		v.objs = append(v.objs, byCell[cell])
	}
	for start, end := 0, 0; start < len(cells); start = end {
		imp := map[string]string{}
	grow:
		for end = start; end < len(cells); end++ {
			for n, path := range cells[end].viewImp {
				if p, ok := imp[n]; ok && p != path {
					break grow
				}
			}
			maps.Copy(imp, cells[end].viewImp)
		}
		var b strings.Builder
		b.WriteString("package main\n")
		writeImports(&b, imp)
		for _, cell := range cells[start:end] {
			fmt.Fprintf(&b, "//line %s%s:1\n", cell.path, viewSuffix)
			for _, o := range byCell[cell] {
				b.WriteString(o.view)
				b.WriteString("\n")
			}
		}
		f, err := parser.ParseFile(c.fset, fmt.Sprintf("views%d.%d", k, start), b.String(), parser.SkipObjectResolution)
		if err != nil {
			// A view is generated from declarations that type-checked;
			// failing to parse one is a bug here, not in the cell.
			panic(fmt.Sprintf("cells: views of cells %s to %s do not parse: %v\n%s", cells[start].path, cells[end-1].path, err, b.String()))
		}
		v.files = append(v.files, f)
		v.pos = append(v.pos, c.fset.File(f.FileStart))
	}
	return v
}

// viewCell returns the path of the earlier cell whose view declares pos,
// or false if no view does.
func (c *Compiler) viewCell(pos token.Pos) (string, bool) {
	return strings.CutSuffix(c.fset.PositionFor(pos, true).Filename, viewSuffix)
}
