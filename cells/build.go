package cells

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// build is the build stage: it takes a cell whose source generate gave
// and path the source's hash decided, compiles the source against the
// archives of the earlier cells and the packages the Toolchain built, and
// links it as a plugin. It gives the plugin's file, for load, and sets the
// cell's archive, for later cells' builds.
func (c *Compiler) build(ctx context.Context, cell *Cell) (so string, err error) {
	dir := c.cellDir(cell)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	src := filepath.Join(dir, "cell.go")
	if err := os.WriteFile(src, []byte(cell.source), 0o600); err != nil {
		return "", err
	}
	archives := map[string]string{}
	for _, o := range c.live {
		archives[o.cell.path] = o.cell.archive
	}
	for _, k := range c.byHash {
		archives[k.path] = k.archive
	}
	cfg := filepath.Join(dir, "importcfg")
	if err := c.tc.importcfg(cfg, archives); err != nil {
		return "", err
	}
	cell.archive = filepath.Join(dir, "cell.a")
	race := []string{}
	if c.tc.race {
		race = []string{"-race"}
	}
	args := append([]string{"-o", cell.archive, "-p", cell.path, "-lang=go1.26", "-complete", "-installsuffix", "dynlink",
		"-dynlink", "-nolocalimports", "-pack", "-importcfg", cfg, "-trimpath", dir + "=>"}, race...)
	if err := c.tc.tool(ctx, dir, "compile", append(args, "cell.go")...); err != nil {
		return "", ErrorList{{Msg: "cells: the generated package does not compile (a bug in gotrain):\n" + err.Error() + "\n" + numbered(cell.source)}}
	}
	so = filepath.Join(dir, "cell.so")
	if err := c.tc.link(ctx, dir, "-o", so, "-pluginpath", cell.path, "-importcfg", cfg, cell.archive); err != nil {
		return "", ErrorList{{Msg: "cells: linking the cell failed:\n" + err.Error()}}
	}
	return so, nil
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// cellDir is where a cell's build lives.
func (c *Compiler) cellDir(cell *Cell) string {
	return filepath.Join(c.cfg.Dir, strings.TrimPrefix(cell.path, "gotrain.cells/"))
}
