package cells

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Toolchain builds cells with the Go toolchain: `go list` builds the
// packages cells import (into Go's build cache, fetching modules through
// the module proxy when a cell imports one the session's module does not
// require), and the compiler and linker, called directly, build each cell
// as a plugin. Packages are built with this binary's own flags and the
// module versions it was built with, as a plugin must be.
type Toolchain struct {
	goBin   string
	toolDir string
	modDir  string
	flags   []string // build flags shared with this binary: -race, -tags, -overlay
	race    bool
	// gold says the host linker is gold (ld.gold), which links a cell's
	// plugin in 130 ms of CPU where GNU ld takes 150; it is
	// cleared for the session after a link that fails with it.
	gold  atomic.Bool
	extld string // the C compiler that links, as go env CC says; empty: the linker's default

	mu     sync.Mutex
	pkgs   map[string]pkgInfo // import path to what go list found
	host   map[string]string  // module path to the version this binary links
	getLog func(string)
}

// runtimeOverlay is the go build -overlay file this binary's runtime was
// built with, set by install/build.sh through the linker (-X): Go's runtime
// patched so that loading a plugin costs the same at a session's 2,000th
// cell as at its 20th (install/goruntime/type.go.patch). Every package a
// plugin shares with its host must be the host's own build, runtime
// included, so cells are built with the same overlay. Empty: the runtime as
// Go ships it.
var runtimeOverlay string

// runtimeUnpatched says why this binary's runtime is Go's own, set by
// install/build.sh through the linker (-X) from what install/goruntime.sh
// said: the Go version is not among those the patch was checked on
// (install/goruntime/VERSIONS), or the patch did not apply. Empty in a
// binary built with the overlay, or without install/build.sh.
var runtimeUnpatched string

// Runtime says which Go runtime this binary, and so every cell it builds,
// runs on, and why: patched for many plugins, or as Go ships it because of
// what install/build.sh found, or because it was built without that script.
// `gotrain version` prints it and the kernel logs it at start, since a
// session's cells load more slowly as it grows on the unpatched runtime.
func Runtime() string {
	v := runtime.Version()
	if runtimeOverlay != "" {
		return fmt.Sprintf("%s patched for many plugins (install/goruntime/type.go.patch; %s is in install/goruntime/VERSIONS, the versions it was checked on)", v, v)
	}
	why := runtimeUnpatched
	if why == "" {
		why = "built without install/build.sh, which applies the patch"
	}
	return fmt.Sprintf("%s unpatched: %s", v, why)
}

type pkgInfo struct {
	name, export, dir, err string
}

// ToolchainConfig configures NewToolchain.
type ToolchainConfig struct {
	// Source is gotrain's module root; empty means the tree this binary
	// was built from (its GOTRAIN_SOURCE environment variable overrides).
	Source string
	// ModuleDir holds the session's module (go.mod, go.sum); created.
	ModuleDir string
	// Log receives progress lines, such as a module being fetched.
	Log func(string)
}

// NewToolchain prepares the session's module: it requires gotrain and the
// module versions gotrain's go.mod names, so that every package a cell
// shares with this binary is the one the binary links.
func NewToolchain(cfg ToolchainConfig) (*Toolchain, error) {
	src := cfg.Source
	if src == "" {
		src = os.Getenv("GOTRAIN_SOURCE")
	}
	if src == "" {
		src = sourceRoot()
	}
	if src == "" {
		return nil, errors.New("cells: cannot find gotrain's source tree (this binary was built with -trimpath); set GOTRAIN_SOURCE to it")
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("cells: gotrain's source tree at %s: %w", src, err)
	}
	goBin, err := findGo()
	if err != nil {
		return nil, err
	}
	t := &Toolchain{goBin: goBin, modDir: cfg.ModuleDir, pkgs: map[string]pkgInfo{}, host: map[string]string{}, getLog: cfg.Log}
	if t.getLog == nil {
		t.getLog = func(string) {}
	}
	t.race = raceEnabled
	if t.race {
		t.flags = append(t.flags, "-race")
	}
	if runtimeOverlay != "" {
		if _, err := os.Stat(runtimeOverlay); err != nil {
			return nil, fmt.Errorf("cells: this binary's runtime was built with the overlay %s, and its cells must be built on the same runtime, but it is gone (%v); rebuild gotrain with install/build.sh", runtimeOverlay, err)
		}
		t.flags = append(t.flags, "-overlay="+runtimeOverlay)
	}
	bi, haveInfo := debug.ReadBuildInfo()
	if haveInfo {
		for _, s := range bi.Settings {
			if s.Key == "-tags" && s.Value != "" {
				t.flags = append(t.flags, "-tags="+s.Value)
			}
		}
	}
	if err := os.MkdirAll(t.modDir, 0o700); err != nil {
		return nil, fmt.Errorf("cells: creating the session module: %w", err)
	}
	mod, host, indirect, err := sessionModule(string(gomod), src)
	if err != nil {
		return nil, err
	}
	if haveInfo {
		// The modules this binary links bind a plugin to their versions,
		// and gotrain's direct requirements stay as gotrain asks; its
		// other requirements (gorgonia's, for package gorgoniamodel, which the kernel
		// does not link) may move as any module's do.
		linked := map[string]bool{}
		for _, d := range bi.Deps {
			linked[d.Path] = true
		}
		for path := range host {
			if indirect[path] && !linked[path] {
				delete(host, path)
			}
		}
	}
	t.host = host
	if err := os.WriteFile(filepath.Join(t.modDir, "go.mod"), []byte(mod), 0o600); err != nil {
		return nil, err
	}
	if sum, err := os.ReadFile(filepath.Join(src, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(t.modDir, "go.sum"), sum, 0o600); err != nil {
			return nil, err
		}
	}
	out, err := t.goCmd(context.Background(), "env", "GOTOOLDIR", "CC")
	if err != nil {
		return nil, fmt.Errorf("cells: go env GOTOOLDIR CC: %v", err)
	}
	env := strings.Split(strings.TrimSpace(out), "\n")
	t.toolDir = env[0]
	if len(env) > 1 {
		// The C compiler the go command links with; a CC with arguments
		// is left to the linker's default, which the go command would
		// split into -extld and -extldflags.
		if cc := strings.TrimSpace(env[1]); cc != "" && !strings.ContainsAny(cc, " \t") {
			t.extld = cc
		}
	}
	if _, err := exec.LookPath("ld.gold"); err == nil {
		t.gold.Store(true)
	}
	return t, nil
}

// ModuleFile returns the session's go.mod.
func (t *Toolchain) ModuleFile() string { return filepath.Join(t.modDir, "go.mod") }

// sourceRoot finds gotrain's module root from where this file was
// compiled.
func sourceRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(file))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return ""
	}
	return root
}

func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("cells: the go command is not on PATH nor in " + runtime.GOROOT() + "; cells are compiled by the Go toolchain, so install Go")
}

var requireLine = regexp.MustCompile(`^\s*([^\s()]+)\s+(v[^\s]+)`)

// sessionModule writes the go.mod of the session's module from gotrain's:
// the same requirements, gotrain itself replaced by its source tree, and
// gotrain's replacements with their paths made absolute. It also returns
// the module versions gotrain requires, and which of them are indirect.
func sessionModule(gomod, src string) (mod string, host map[string]string, indirect map[string]bool, err error) {
	var b strings.Builder
	b.WriteString("module gotrain.cells\n\ngo 1.26\n\nrequire github.com/gotrain/gotrain v0.0.0\n\nreplace github.com/gotrain/gotrain => " + src + "\n")
	// gorgonia's default version of this module panics at init on Go 1.26
	// (it lists the Go versions it trusts); this one asks the runtime.
	b.WriteString("\nrequire go4.org/unsafe/assume-no-moving-gc v0.0.0-20231121144256-b99613f794b6\n")
	host = map[string]string{}
	indirect = map[string]bool{}
	inRequire := false
	sc := bufio.NewScanner(strings.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "require ("):
			inRequire = true
			continue
		case inRequire && line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "replace "):
			old, repl, ok := strings.Cut(strings.TrimPrefix(line, "replace "), "=>")
			if !ok {
				return "", nil, nil, fmt.Errorf("cells: gotrain's go.mod: cannot read %q", line)
			}
			repl = strings.TrimSpace(repl)
			if strings.HasPrefix(repl, ".") {
				repl = filepath.Join(src, repl)
			}
			fmt.Fprintf(&b, "replace %s => %s\n", strings.TrimSpace(old), repl)
			continue
		}
		if strings.HasPrefix(line, "require ") {
			line = strings.TrimPrefix(line, "require ")
		} else if !inRequire {
			continue
		}
		if m := requireLine.FindStringSubmatch(line); m != nil {
			host[m[1]] = m[2]
			if strings.Contains(line, "// indirect") {
				indirect[m[1]] = true
			}
			fmt.Fprintf(&b, "require %s %s\n", m[1], m[2])
		}
	}
	return b.String(), host, indirect, nil
}

func (t *Toolchain) goCmd(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.goBin, args...)
	cmd.Dir = t.modDir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "CGO_ENABLED=1", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), errors.New(msg)
	}
	return stdout.String(), nil
}

// Require makes sure the packages at paths, and everything they import,
// are built and their export data known. A path no required module
// provides is fetched with `go get`; a fetch that would change the
// version of a module this binary links is refused.
func (t *Toolchain) Require(paths []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var missing []string
	for _, p := range paths {
		if _, ok := t.pkgs[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := t.list(missing); err != nil {
		return err
	}
	var fetch []string
	for _, p := range missing {
		if info := t.pkgs[p]; strings.Contains(info.err, "no required module provides package") {
			fetch = append(fetch, p)
		}
	}
	if len(fetch) > 0 {
		if err := t.get(fetch); err != nil {
			return err
		}
		for _, p := range fetch {
			delete(t.pkgs, p)
		}
		if err := t.list(missing); err != nil {
			return err
		}
	}
	var errs []string
	for _, p := range missing {
		if info := t.pkgs[p]; info.err != "" {
			errs = append(errs, fmt.Sprintf("cannot import %q: %s", p, info.err))
			delete(t.pkgs, p)
		}
	}
	if len(errs) > 0 {
		return ErrorList{{Msg: strings.Join(errs, "\n")}}
	}
	return nil
}

// list runs go list on paths and records every package it reports.
func (t *Toolchain) list(paths []string) error {
	args := append([]string{"list", "-buildmode=plugin", "-export", "-deps", "-e"}, t.flags...)
	args = append(args, "-f", "{{.ImportPath}}\t{{.Name}}\t{{.Export}}\t{{.Dir}}\t{{with .Error}}{{.Err}}{{end}}")
	args = append(args, paths...)
	args = append(args, "runtime/cgo")
	out, err := t.goCmd(context.Background(), args...)
	if err != nil && out == "" {
		return ErrorList{{Msg: "building the imports: " + err.Error()}}
	}
	// Lines end in a tab when the package has no error: no TrimSpace.
	for _, line := range strings.Split(out, "\n") {
		f := strings.SplitN(line, "\t", 5)
		if len(f) < 5 {
			continue
		}
		info := pkgInfo{name: f[1], export: f[2], dir: f[3], err: strings.TrimSpace(f[4])}
		if info.err == "" && info.export == "" && f[0] != "unsafe" {
			info.err = "no export data (it did not build)"
		}
		t.pkgs[f[0]] = info
	}
	for _, p := range paths {
		if _, ok := t.pkgs[p]; !ok {
			msg := "go list did not report it"
			if err != nil {
				msg = err.Error()
			}
			t.pkgs[p] = pkgInfo{err: msg}
		}
	}
	return nil
}

// get fetches the modules providing paths, refusing version changes to
// modules this binary links.
func (t *Toolchain) get(paths []string) error {
	gomod, _ := os.ReadFile(filepath.Join(t.modDir, "go.mod"))
	gosum, _ := os.ReadFile(filepath.Join(t.modDir, "go.sum"))
	restore := func() {
		os.WriteFile(filepath.Join(t.modDir, "go.mod"), gomod, 0o600)
		os.WriteFile(filepath.Join(t.modDir, "go.sum"), gosum, 0o600)
	}
	t.getLog("go get " + strings.Join(paths, " "))
	if _, err := t.goCmd(context.Background(), append([]string{"get"}, paths...)...); err != nil {
		restore()
		msg := err.Error()
		if strings.Contains(msg, "github.com/gotrain/gotrain") {
			// go get tried to change gotrain's own version, which only
			// happens to satisfy a module gotrain requires at another
			// version.
			msg = "it would change a module the kernel links (" + firstLine(msg) + ")"
		}
		return ErrorList{{Msg: "go get " + strings.Join(paths, " ") + ": " + msg}}
	}
	if err := t.checkVersions(); err != nil {
		restore()
		return err
	}
	t.pkgs = map[string]pkgInfo{}
	return nil
}

// Get runs `go get` for a module query such as gonum.org/v1/plot@v0.15.0
// in the session's module.
func (t *Toolchain) Get(query string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if path, version, ok := strings.Cut(query, "@"); ok {
		if want, linked := t.host[path]; linked && version != want {
			return ErrorList{{Msg: fmt.Sprintf("version conflict: module %s: the kernel links %s, %%go get asked for %s; cells must use the kernel's versions of the modules it links", path, want, version)}}
		}
	}
	return t.get([]string{query})
}

// checkVersions refuses a session module whose module versions differ
// from those this binary links: a plugin must use the binary's packages.
func (t *Toolchain) checkVersions() error {
	out, err := t.goCmd(context.Background(), "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
	if err != nil {
		return ErrorList{{Msg: "go list -m all: " + err.Error()}}
	}
	var conflicts []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		path, version, _ := strings.Cut(line, " ")
		if want, ok := t.host[path]; ok && version != want {
			conflicts = append(conflicts, fmt.Sprintf("module %s: the kernel links %s, the import needs %s", path, want, version))
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return ErrorList{{Msg: "version conflict: " + strings.Join(conflicts, "; ") + "; cells must use the kernel's versions (pick a version of the new module that works with them, with %go get module@version)"}}
	}
	return nil
}

// PackageName returns the name of the package at path.
func (t *Toolchain) PackageName(path string) (string, error) {
	if err := t.Require([]string{path}); err != nil {
		return "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pkgs[path].name, nil
}

// PackageDir returns the source directory of a package Require built, or
// "".
func (t *Toolchain) PackageDir(path string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pkgs[path].dir
}

// Importer returns a types.Importer reading the export data of the
// packages Require built.
func (t *Toolchain) Importer(fset *token.FileSet) types.Importer {
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		t.mu.Lock()
		info, ok := t.pkgs[path]
		t.mu.Unlock()
		if !ok || info.export == "" {
			return nil, fmt.Errorf("package %q is not built (import it in a cell)", path)
		}
		return os.Open(info.export)
	})
}

// importcfg writes the compiler's and linker's import configuration: every
// package built so far and every earlier cell.
func (t *Toolchain) importcfg(file string, cells map[string]string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for p, info := range t.pkgs {
		if info.export != "" {
			fmt.Fprintf(&b, "packagefile %s=%s\n", p, info.export)
		}
	}
	for p, a := range cells {
		fmt.Fprintf(&b, "packagefile %s=%s\n", p, a)
	}
	return os.WriteFile(file, []byte(b.String()), 0o600)
}

// link links a cell's archive into a plugin. Every cell is a plugin, and
// a plugin is linked by the host linker (the C compiler driving ld): the
// flags keep that step short. -compressdwarf=false skips the linker's probe
// of the C compiler for a DWARF compression flag, a test compile and link
// on every cell, of DWARF that -s -w leaves out anyway; gold links faster
// than GNU ld. Together they take a trivial cell's link from 170 ms of CPU
// to 130.
func (t *Toolchain) link(ctx context.Context, dir string, args ...string) error {
	base := []string{"-buildmode=plugin", "-installsuffix", "dynlink", "-s", "-w", "-compressdwarf=false"}
	if t.race {
		base = append(base, "-race")
	}
	if t.extld != "" {
		base = append(base, "-extld="+t.extld)
	}
	if t.gold.Load() {
		err := t.tool(ctx, dir, "link", append(append(base, "-extldflags=-fuse-ld=gold"), args...)...)
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "gold") {
			return err
		}
		// A C compiler that does not know gold, or a gold that fails
		// (its error names it): GNU ld from now on, and this cell again
		// with it. Any other link error is the cell's.
		t.gold.Store(false)
	}
	return t.tool(ctx, dir, "link", append(base, args...)...)
}

func (t *Toolchain) tool(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(t.toolDir, name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
