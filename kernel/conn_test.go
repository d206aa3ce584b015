package kernel_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

func TestReadConnectionFile(t *testing.T) {
	const good = `{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 5001, "control_port": 5002,
		"stdin_port": 5003, "iopub_port": 5004, "hb_port": 5005, "key": "k", "signature_scheme": "hmac-sha256",
		"kernel_name": "gotrain"}`
	tests := []struct {
		name    string
		body    string // "" means the file does not exist
		want    kernel.ConnectionInfo
		wantErr string
	}{
		{name: "jupyter_client file", body: good, want: kernel.ConnectionInfo{
			Transport: "tcp", IP: "127.0.0.1", ShellPort: 5001, ControlPort: 5002, StdinPort: 5003,
			IOPubPort: 5004, HBPort: 5005, Key: "k", SignatureScheme: "hmac-sha256", KernelName: "gotrain"}},
		{name: "empty key and scheme", body: `{"ip": "0.0.0.0", "shell_port": 1}`,
			want: kernel.ConnectionInfo{IP: "0.0.0.0", ShellPort: 1}},
		{name: "missing", wantErr: "no such file"},
		{name: "not json", body: `{"ip":`, wantErr: "unexpected end of JSON"},
		{name: "unknown scheme", body: strings.Replace(good, "hmac-sha256", "hmac-md5", 1),
			wantErr: `unknown signature_scheme "hmac-md5" (want "hmac-sha256")`},
		{name: "key without scheme", body: strings.Replace(good, `"hmac-sha256"`, `""`, 1), wantErr: "signature_scheme is empty but key is set"},
		{name: "unknown transport", body: strings.Replace(good, `"tcp"`, `"udp"`, 1), wantErr: `unknown transport "udp"`},
		{name: "no ip", body: strings.Replace(good, `"127.0.0.1"`, `""`, 1), wantErr: "no ip"},
		{name: "bad port", body: strings.Replace(good, "5005", "70000", 1), wantErr: "hb_port: got 70000, want 0..65535"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "kernel-"+string(rune('a'+i))+".json")
			if tt.body != "" {
				if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := kernel.ReadConnectionFile(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "kernel: ") {
					t.Fatalf("ReadConnectionFile(%s) error = %v, want one starting \"kernel: \" containing %q", tt.body, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadConnectionFile(%s): %v", tt.body, err)
			}
			if got != tt.want {
				t.Errorf("ReadConnectionFile(%s) = %+v, want %+v", tt.body, got, tt.want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	exec := newFakeExec()
	tests := []struct {
		name    string
		cfg     kernel.Config
		exec    kernel.Executor
		wantErr string
	}{
		{"nil executor", kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1"}}, nil, "kernel: new: nil Executor"},
		{"unknown scheme", kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: "k", SignatureScheme: "rot13"}}, exec,
			`kernel: new: unknown signature_scheme "rot13" (want "hmac-sha256")`},
		{"unbindable address", kernel.Config{Connection: kernel.ConnectionInfo{IP: "203.0.113.1", Key: "k", SignatureScheme: "hmac-sha256"}}, exec,
			"kernel: bind shell to tcp://203.0.113.1:0"},
		{"history file in a missing directory", kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: "k", SignatureScheme: "hmac-sha256"},
			HistoryFile: filepath.Join(t.TempDir(), "no", "such", "dir")}, exec, "kernel: history file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := kernel.New(tt.cfg, tt.exec)
			if err == nil {
				k.Close()
				t.Fatalf("New succeeded, want error %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestIssue31EmptyKey checks that an empty key, which turns message
// authentication off, is refused on tcp unless asked for, and accepted on
// ipc, whose socket files' permissions guard the kernel instead.
func TestIssue31EmptyKey(t *testing.T) {
	ipcDir := t.TempDir()
	tests := []struct {
		name    string
		cfg     kernel.Config
		wantErr string // empty: New succeeds
	}{
		{"tcp", kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1"}}, "the connection's key is empty"},
		{"tcp, transport unset", kernel.Config{Connection: kernel.ConnectionInfo{Transport: "", IP: "127.0.0.1"}}, "the connection's key is empty"},
		{"tcp allowed", kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1"}, AllowUnsigned: true}, ""},
		{"ipc", kernel.Config{Connection: kernel.ConnectionInfo{Transport: "ipc", IP: filepath.Join(ipcDir, "k"),
			ShellPort: 1, ControlPort: 2, StdinPort: 3, IOPubPort: 4, HBPort: 5}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			k, err := kernel.New(tt.cfg, newFakeExec())
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v, want success", err)
				}
				k.Close()
				return
			}
			if err == nil {
				k.Close()
				t.Fatalf("New succeeded, want error %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestIssue31ConnectionFileMode checks that a connection file others can
// read is reported, and one only its owner reads is not.
func TestIssue31ConnectionFileMode(t *testing.T) {
	for _, tt := range []struct {
		mode    os.FileMode
		wantErr bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o644, true}, {0o604, true}} {
		t.Run(tt.mode.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kernel.json")
			if err := os.WriteFile(path, []byte("{}"), tt.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, tt.mode) // past the umask
			err := kernel.CheckConnectionFileMode(path)
			if (err != nil) != tt.wantErr {
				t.Errorf("CheckConnectionFileMode(%v) = %v, want error %v", tt.mode, err, tt.wantErr)
			}
		})
	}
}

// TestConnectionFileEndToEnd starts a kernel on ports picked free by the
// test and written to a connection file, as a notebook server does.
func TestConnectionFileEndToEnd(t *testing.T) {
	ports := freePorts(t, 5)
	body := `{"transport":"tcp","ip":"127.0.0.1","key":"` + testKey + `","signature_scheme":"hmac-sha256",` +
		`"shell_port":` + ports[0] + `,"control_port":` + ports[1] + `,"stdin_port":` + ports[2] +
		`,"iopub_port":` + ports[3] + `,"hb_port":` + ports[4] + `}`
	path := filepath.Join(t.TempDir(), "kernel.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	ci, err := kernel.ReadConnectionFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, func(c *kernel.Config) { c.Connection = ci })
	if got := h.k.Connection(); got != ci {
		t.Errorf("Connection() = %+v, want the file's %+v", got, ci)
	}
	if r, _ := h.request(kerneltest.Shell, "execute_request", obj{"code": "1+1"}); r.Content["status"] != "ok" {
		t.Errorf("execute_reply %v", r.Content)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything\nat all", true},
		{"pr*", "print", true},
		{"pr*", "sprint", false},
		{"*int", "sprint", true},
		{"p?int", "print", true},
		{"p?int", "pint", false},
		{"?", "é", true},
		{"[ps]rint", "sprint", false},
		{"[ps]print", "sprint", true},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[^a-c]x", "dx", true},
		{"[^a-c]x", "ax", false},
		{"[]]", "]", true},
		{"[abc", "[abc", true},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-b-b-d", false},
		{"*.*.*", "fmt.Println(a.b)", true},
		{"Print", "print", false},
		{"**a", "bba", true},
		{"a*", "", false},
	}
	for _, tt := range tests {
		if got := kernel.GlobMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}
