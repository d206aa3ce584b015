package cells

import (
	"sort"
	"strings"
)

// commit is the commit stage, the only one that changes the session's
// tables: it takes a loaded cell with what check and generate gave, keeps
// a new build under its source's hash with the objects describing its
// names and what their functions read and name, makes its declarations
// the newest of their names, and remembers the cell's source for a run of
// it unchanged. It gives the notes that say which earlier functions a
// redefinition leaves on the old definition (bind.go).
func (c *Compiler) commit(u *unit, gen *generated, cell *Cell, reused bool) []string {
	if !reused {
		for _, o := range u.objs {
			if o.cell == cell {
				o.typeKey = strings.ReplaceAll(o.typeKey, placeholderPath, cell.path)
			}
		}
		keepDeps(gen.deps, u.objs)
		keepRefs(gen.refs, cell, u.objs)
		cell.objs, cell.viewImp = u.objs, u.viewImp
		c.byHash[gen.hash] = cell
	}
	var notices []string
	var types [][2]*object // earlier types this cell declares anew, and what replaces each
	for _, o := range cell.objs {
		old := c.live[o.name]
		if old != nil && old != o && old.cell != cell {
			if old.kind == objType && old.owner() != o.owner() {
				types = append(types, [2]*object{old, o})
				c.typeRedeclared = true
			} else if n := c.redefinition(o, old); n != "" {
				notices = append(notices, n)
			}
		}
		if old != o {
			c.live[o.name] = o
			c.all[o.name+"@"+o.owner().path] = o
			c.gen++
		}
		// A type declared anew has the methods its cell gives it: the old
		// type's go with it.
		if old != nil && old != o && old.kind == objType && o.kind != objMethod {
			for _, m := range c.methodsOf(o.name) {
				if m.cell != cell {
					delete(c.live, m.name)
					c.gen++
				}
			}
		}
	}
	for name, path := range u.own {
		if c.imports[name] != path {
			c.imports[name] = path
			c.gen++
		}
	}
	c.stale = c.findStale(nil)
	for _, t := range types {
		if n := c.staleNote(t[0], t[1], u.again[t[0].name] != nil); n != "" {
			notices = append(notices, n)
		}
	}
	sort.Strings(notices)
	if len(c.recent) >= maxRecent {
		c.recent = map[string]recentCell{}
	}
	c.recent[u.code] = recentCell{c.gen, cell}
	return notices
}
