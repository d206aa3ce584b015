package cells

import (
	"context"
	"fmt"
	"go/token"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// cellFile is the file name every position inside the cell being compiled
// carries, so type errors point into the cell.
const cellFile = "cell"

// viewSuffix ends the file name of an earlier cell's view.
const viewSuffix = ".view"

// pathPrefix is the import path of every cell's package.
const pathPrefix = "gotrain.cells/c"

// rtPath is the package generated code calls at run time.
const rtPath = "github.com/gotrain/gotrain/cells/rt"

// Config says where a Compiler keeps its work and how it builds.
type Config struct {
	// Dir holds the session's module and its builds; it is created, and
	// removed by Close.
	Dir string
	// Toolchain builds packages; see NewToolchain.
	Toolchain *Toolchain
}

// Compiler compiles the cells of one session and loads them into this
// process. Its methods must not be called concurrently.
type Compiler struct {
	cfg Config
	tc  *Toolchain
	// fset holds the positions of the one compilation or completion in
	// progress; each starts a fresh one (freshFileSet), so that nothing it
	// parsed or imported outlives it. A session-long set grew by every
	// view and import of every check, failed cells included: the importer
	// names its files with substrings of a package's export data, which
	// kept the whole of it alive.
	fset *token.FileSet

	imports map[string]string  // the session's imports: name to path
	live    map[string]*object // the newest top-level object of each name
	byHash  map[string]*Cell   // a generated package's hash to its build
	// gen counts changes to live and imports; recent maps a cell's source
	// to its build while gen is what it was, so an unchanged cell run
	// again in an unchanged session skips even type-checking.
	gen    int
	recent map[string]recentCell
	// views holds the parsed views of earlier cells by chunk (seq /
	// viewChunk) while their live objects stay the same, so that a
	// compilation parses only the views that changed: reparsing them all
	// made a cell's check grow with the session.
	views map[int64]chunkView
	// stale holds the live objects that keep a type since declared anew,
	// with that type (stale.go); typeRedeclared says whether any type has
	// been, without which none is stale.
	stale          map[*object]string
	typeRedeclared bool
	// all holds every object committed, live or not, by its name and its
	// owner's path: what a function's refs name; a function declared again
	// with its signature is its newest body.
	all map[string]*object
}

// Cell is a compiled, loaded cell.
type Cell struct {
	// Run runs the cell's statements; it panics as they do.
	Run func()
	// Notices are one-line remarks about the cell's declarations, such as
	// what a redefinition leaves to earlier values.
	Notices []string
	// Reused says the cell's build came from an earlier run.
	Reused bool

	path    string
	seq     int64 // the number in path
	alias   string
	archive string
	objs    []*object
	viewImp map[string]string // name to path, as its declarations' views use them
	source  string            // the generated package, for errors and tests
}

// Source returns the Go source the cell compiled to.
func (c *Cell) Source() string { return c.source }

var cellSeq atomic.Int64

type recentCell struct {
	gen  int
	cell *Cell
}

// maxRecent bounds Compiler.recent; past it the map starts again.
const maxRecent = 512

type objKind int

const (
	objType objKind = iota
	objFunc
	objVar
	objConst
	// objMethod is a method of a cell's type, named "Type.method" in
	// Compiler.live: a method is declared, checked and late-bound on its
	// own, like a function (bind.go).
	objMethod
)

// object is a top-level name a cell declared, as later cells see it.
type object struct {
	name   string
	kind   objKind
	cell   *Cell
	access string // its exported name in the cell's package
	deref  bool   // access is a pointer to the variable
	view   string // its declaration as the checking view spells it
	code   string // the source of the cell that declared it
	line   int    // where in code
	// full is, for a type or a method, its declaration as written, for a
	// later cell that declares the type again to add a method.
	full string
	// deps are, for a function or a method, the session variables it
	// reads, and the slots of the functions and methods it calls, through
	// the functions it calls (deps.go).
	deps []depVar
	// typeKey identifies a variable's type, or a function's or a method's
	// signature (a method's with its receiver), across cells; slot is the
	// cell whose package holds the slot every call of a function or method
	// goes through, nil for a generic one; refs are the session names a
	// function, a method, a type's declaration or a func literal held by a
	// variable name (bind.go).
	typeKey string
	slot    *Cell
	refs    []ref
}

// New starts a compiler for a new session.
func New(cfg Config) (*Compiler, error) {
	if cfg.Toolchain == nil {
		return nil, fmt.Errorf("cells: Config.Toolchain is nil; want a toolchain from NewToolchain")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("cells: creating the session directory: %w", err)
	}
	return &Compiler{
		cfg:     cfg,
		tc:      cfg.Toolchain,
		fset:    token.NewFileSet(),
		imports: map[string]string{},
		live:    map[string]*object{},
		byHash:  map[string]*Cell{},
		recent:  map[string]recentCell{},
		views:   map[int64]chunkView{},
		all:     map[string]*object{},
	}, nil
}

// Builds returns how many packages the compiler has built and loaded:
// one per distinct cell, however often each runs.
func (c *Compiler) Builds() int { return len(c.byHash) }

// Close removes the session's build products. Loaded cells stay loaded.
func (c *Compiler) Close() error { return os.RemoveAll(c.cfg.Dir) }

// Compile type-checks a cell against the session, builds it and loads it.
// Its declarations are visible to later cells from then on, even if
// running it fails. A type error is returned as an ErrorList with the
// cell's positions.
func (c *Compiler) Compile(ctx context.Context, code string) (cell *Cell, err error) {
	defer func() {
		// A panic here is a bug in gotrain; the session must survive it.
		if v := recover(); v != nil {
			cell, err = nil, ErrorList{{Msg: fmt.Sprintf("cells: the compiler failed on this cell (a bug in gotrain): %v", v)}}
		}
	}()
	return c.compile(ctx, code)
}

// compile runs the stages one after the other, each taking what the one
// before gave: resolve (resolve.go) the cell's parts and imports, check
// (check.go) a unit with the objects describing its names, generate
// (gen.go) the package's source, build (build.go) the plugin, load
// (load.go) the cell's statements, commit (commit.go) the notes. Only
// commit changes the session's tables; a source already built skips
// build and load.
func (c *Compiler) compile(ctx context.Context, code string) (*Cell, error) {
	if r, ok := c.recent[code]; ok && r.gen == c.gen {
		r.cell.Reused, r.cell.Notices = true, nil
		return r.cell, nil
	}
	c.freshFileSet()
	r, err := c.resolve(code, false)
	if err != nil {
		return nil, err
	}
	u, err := c.check(r)
	if err != nil {
		return nil, err
	}
	gen, err := c.generate(u)
	if err != nil {
		return nil, err
	}
	cell, reused := c.byHash[gen.hash]
	if !reused {
		cell = u.cell
		// Numbered across the process: a plugin path loads only once,
		// whichever session loads it.
		cell.seq = cellSeq.Add(1)
		n := strconv.FormatInt(cell.seq, 10)
		cell.path, cell.alias = pathPrefix+n, "_gtc"+n
		cell.source = strings.ReplaceAll(gen.source, placeholderPath, cell.path)
		so, err := c.build(ctx, cell)
		if err != nil {
			return nil, err
		}
		err = load(cell, so)
		os.Remove(so) // a loaded plugin needs its file no more
		if err != nil {
			return nil, err
		}
	}
	cell.Reused = reused
	cell.Notices = c.commit(u, gen, cell, reused)
	return cell, nil
}
