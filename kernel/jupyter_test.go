//go:build jupyter

package kernel_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
)

// TestJupyterClient drives the kernel with Debian's jupyter_client
// (/usr/bin/python3), the reference client, through a real connection file.
func TestJupyterClient(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import jupyter_client").Run(); err != nil {
		t.Skipf("jupyter_client not available: %v", err)
	}
	logs := &syncBuffer{}
	k, err := kernel.New(kernel.Config{
		Connection: kernel.ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: testKey, SignatureScheme: "hmac-sha256"},
		Logger:     slog.New(slog.NewTextHandler(logs, nil)),
	}, newFakeExec())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	runErr := make(chan error, 1)
	go func() { runErr <- k.Run(context.Background()) }()

	b, _ := json.Marshal(k.Connection())
	path := filepath.Join(t.TempDir(), "kernel.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "testdata/jupyter_client_check.py", path).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("jupyter_client: %v\n%s\nkernel log:\n%s", err, stderr, logs)
	}
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("bad output %q: %v", out, err)
	}
	checks := map[string]any{
		"execute_iopub":   []any{"status", "execute_input", "stream", "execute_result", "status"},
		"input_prompts":   []any{"name? "},
		"input_stream":    []any{"hi gopher"},
		"interrupt_reply": map[string]any{"status": "ok"},
		"hb_beating":      true,
		"shutdown_reply":  map[string]any{"status": "ok", "restart": false},
		"is_complete":     map[string]any{"status": "incomplete", "indent": "\t"},
	}
	for key, want := range checks {
		if got := res[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
	}
	t.Logf("jupyter_client execute round trip: p50 %.2f ms", res["latency_p50_ms"])
	if got := res["kernel_info"].(map[string]any)["protocol_version"]; got != "5.5" {
		t.Errorf("kernel_info protocol_version = %v", got)
	}
	if got := res["execute_reply"].(map[string]any)["status"]; got != "ok" {
		t.Errorf("execute_reply = %v", res["execute_reply"])
	}
	select {
	case err := <-runErr:
		if err != kernel.ErrClosed {
			t.Errorf("Run = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Run did not return after jupyter_client's shutdown")
	}
}
