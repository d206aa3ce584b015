// Package installtest holds what tests of several packages need to check
// how gotrain was built: which Go runtime a binary links, patched for many
// plugins (install/goruntime.sh) or as Go ships it.
package installtest

import (
	"debug/elf"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// patchedSymbol is a variable that only install/goruntime/type.go.patch
// declares in the runtime; a binary built on the patched runtime has it in
// its symbol table, one built without the overlay does not.
const patchedSymbol = "runtime.typelinksCollected"

// RuntimePatched reports whether the Go binary (or plugin) at path was
// built on the runtime install/goruntime.sh patches, from its symbol table,
// not from what the binary says of itself.
func RuntimePatched(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("installtest: reading the symbols of %s: %w", path, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return false, fmt.Errorf("installtest: reading the symbols of %s: %w", path, err)
	}
	for _, s := range syms {
		if s.Name == patchedSymbol {
			return true, nil
		}
	}
	return false, nil
}

// Overlay runs root's install/goruntime.sh with the extra environment env
// (KEY=VALUE) and returns the overlay it printed, empty where it made none,
// and what it said on stderr. goBin's folder goes first on its PATH, so that
// it patches that Go's runtime.
func Overlay(root, goBin string, env ...string) (overlay, said string, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	cmd := exec.Command(filepath.Join(abs, "install", "goruntime.sh"))
	cmd.Env = append(cmd.Environ(), env...)
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(goBin)+string(filepath.ListSeparator)+pathEnv(cmd.Env))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", stderr.String(), fmt.Errorf("installtest: install/goruntime.sh: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out)), stderr.String(), nil
}

// pathEnv returns the last PATH in env.
func pathEnv(env []string) string {
	p := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			p = v
		}
	}
	return p
}
