package kernelspec

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

//go:embed logos
var assets embed.FS

// DefaultName is the kernel name front ends list and notebooks record.
const DefaultName = "gotrain"

// Spec is the content of kernel.json as the Jupyter kernelspec format
// defines it.
type Spec struct {
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode"`
	Env           map[string]string `json:"env,omitempty"`
	Metadata      map[string]any    `json:"metadata,omitempty"`
}

// NewSpec returns the kernelspec for the gotrain binary at binary, which
// must be an absolute path: Jupyter starts kernels from arbitrary working
// directories. kernelFlags go between `kernel` and the connection file,
// such as {"--memory-limit", "8GiB"}.
func NewSpec(binary string, kernelFlags ...string) (Spec, error) {
	if !filepath.IsAbs(binary) {
		return Spec{}, fmt.Errorf("install: kernel binary path %q is not absolute", binary)
	}
	argv := append(append([]string{binary, "kernel"}, kernelFlags...), "{connection_file}")
	return Spec{
		Argv:        argv,
		DisplayName: "Go (gotrain)",
		Language:    "go",
		// Interrupts arrive as interrupt_request on the control channel,
		// so a cell stops at a safe point instead of by a signal.
		InterruptMode: "message",
		Metadata:      map[string]any{"debugger": false},
	}, nil
}

// Where says which kernels folder a kernelspec goes to.
type Where struct {
	User      bool   // the user's Jupyter data folder
	Prefix    string // PREFIX/share/jupyter/kernels
	SysPrefix bool   // Debian Python's sys.prefix, /usr
}

// ErrWhere reports contradictory destinations.
var ErrWhere = errors.New("install: choose at most one of --user, --prefix and --sys-prefix")

var validName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// Dir returns the folder the kernelspec named name is written to.
// With no destination chosen it is the system-wide /usr/local prefix, as
// for `jupyter kernelspec install`.
func Dir(w Where, name string) (string, error) {
	if !validName.MatchString(name) {
		return "", fmt.Errorf("install: kernel name %q may only hold letters, digits, '.', '_' and '-'", name)
	}
	chosen := 0
	for _, b := range []bool{w.User, w.Prefix != "", w.SysPrefix} {
		if b {
			chosen++
		}
	}
	if chosen > 1 {
		return "", ErrWhere
	}
	var kernels string
	switch {
	case w.User:
		data, err := UserDataDir()
		if err != nil {
			return "", err
		}
		kernels = filepath.Join(data, "kernels")
	case w.Prefix != "":
		abs, err := filepath.Abs(w.Prefix)
		if err != nil {
			return "", fmt.Errorf("install: prefix %q: %w", w.Prefix, err)
		}
		kernels = filepath.Join(abs, "share", "jupyter", "kernels")
	case w.SysPrefix:
		kernels = "/usr/share/jupyter/kernels"
	default:
		kernels = "/usr/local/share/jupyter/kernels"
	}
	return filepath.Join(kernels, name), nil
}

// UserDataDir returns the user's Jupyter data folder. It follows jupyter_core's rules on Linux: JUPYTER_DATA_DIR,
// then XDG_DATA_HOME/jupyter, then ~/.local/share/jupyter.
func UserDataDir() (string, error) {
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "jupyter"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("install: no home folder for --user: %w", err)
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// Write writes kernel.json for spec and the logos into dir, creating it.
func Write(dir string, spec Spec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	js, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return fmt.Errorf("install: encode kernel.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kernel.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	logos, err := fs.Glob(assets, "logos/logo-*.png")
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	for _, name := range logos {
		b, err := assets.ReadFile(name)
		if err != nil {
			return fmt.Errorf("install: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), b, 0o644); err != nil {
			return fmt.Errorf("install: %w", err)
		}
	}
	return nil
}
