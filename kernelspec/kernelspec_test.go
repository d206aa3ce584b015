package kernelspec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDir(t *testing.T) {
	t.Setenv("JUPYTER_DATA_DIR", "/home/u/jdata")
	tests := []struct {
		name  string
		where Where
		kname string
		want  string
		err   bool
	}{
		{"default", Where{}, "gotrain", "/usr/local/share/jupyter/kernels/gotrain", false},
		{"user", Where{User: true}, "gotrain", "/home/u/jdata/kernels/gotrain", false},
		{"prefix", Where{Prefix: "/opt/j"}, "go2", "/opt/j/share/jupyter/kernels/go2", false},
		{"sys-prefix", Where{SysPrefix: true}, "gotrain", "/usr/share/jupyter/kernels/gotrain", false},
		{"two destinations", Where{User: true, SysPrefix: true}, "gotrain", "", true},
		{"bad name", Where{}, "go/../x", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Dir(tt.where, tt.kname)
			if (err != nil) != tt.err {
				t.Fatalf("Dir(%+v, %q) error = %v, want error %v", tt.where, tt.kname, err, tt.err)
			}
			if got != tt.want {
				t.Errorf("Dir(%+v, %q) = %q, want %q", tt.where, tt.kname, got, tt.want)
			}
		})
	}
	if _, err := Dir(Where{User: true, Prefix: "/x"}, "g"); !errors.Is(err, ErrWhere) {
		t.Errorf("two destinations: error %v, want ErrWhere", err)
	}
}

func TestWrite(t *testing.T) {
	if _, err := NewSpec("relative/gotrain"); err == nil {
		t.Fatal("NewSpec accepted a relative binary path")
	}
	spec, err := NewSpec("/usr/local/bin/gotrain")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kernels", "gotrain")
	if err := Write(dir, spec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("kernel.json is not JSON: %v\n%s", err, b)
	}
	argv, _ := got["argv"].([]any)
	if len(argv) != 3 || argv[0] != "/usr/local/bin/gotrain" || argv[1] != "kernel" || argv[2] != "{connection_file}" {
		t.Errorf("argv = %v, want [/usr/local/bin/gotrain kernel {connection_file}]", got["argv"])
	}
	for key, want := range map[string]string{"display_name": "Go (gotrain)", "language": "go", "interrupt_mode": "message"} {
		if got[key] != want {
			t.Errorf("%s = %v, want %q", key, got[key], want)
		}
	}
	for _, logo := range []string{"logo-32x32.png", "logo-64x64.png"} {
		b, err := os.ReadFile(filepath.Join(dir, logo))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 8 || string(b[1:4]) != "PNG" {
			t.Errorf("%s is not a PNG file", logo)
		}
	}
}

func TestNewSpecKernelFlags(t *testing.T) {
	spec, err := NewSpec("/usr/local/bin/gotrain", "--memory-limit", "8GiB")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/local/bin/gotrain", "kernel", "--memory-limit", "8GiB", "{connection_file}"}
	if !slices.Equal(spec.Argv, want) {
		t.Errorf("argv = %q, want %q", spec.Argv, want)
	}
}
