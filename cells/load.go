package cells

import (
	"plugin"
	"strings"

	"github.com/gotrain/gotrain/cells/rt"
)

// load is the load stage: it takes a built cell and its plugin's file,
// opens the plugin, which runs the cell's initialization and registers its
// statements, and gives the cell its Run. plugin.Open looks up the exported functions and
// variables of every package named main in the plugin under the plugin's
// own path; those of earlier cells are not there, and that error, which
// comes after initialization, is expected.
func load(cell *Cell, so string) error {
	_, err := plugin.Open(so)
	if err != nil && !strings.Contains(err.Error(), "could not find symbol") {
		return ErrorList{{Msg: "cells: loading the cell: " + err.Error()}}
	}
	run, ok := rt.Lookup(cell.path)
	if !ok {
		return ErrorList{{Msg: "cells: the cell's plugin loaded but did not register (a bug in gotrain)"}}
	}
	cell.Run = run
	pageOut(so)
	return nil
}
