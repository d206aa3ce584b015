package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/graph"
)

// TestIssue30VersionSaysRuntime: `gotrain version` names the runtime the
// binary and its cells run on and why (install/goruntime_test.go builds
// binaries patched and not, and checks the text).
func TestIssue30VersionSaysRuntime(t *testing.T) {
	var out bytes.Buffer
	if err := runVersion(nil, &out, nil); err != nil {
		t.Fatal(err)
	}
	want := "\nruntime: " + cells.Runtime() + "\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("gotrain version printed %q, want a line %q", out.String(), want)
	}
	if !strings.Contains(cells.Runtime(), " patched for many plugins ") && !strings.Contains(cells.Runtime(), " unpatched: ") {
		t.Errorf("cells.Runtime() = %q, want it to say patched or unpatched, and why", cells.Runtime())
	}
}

// TestIssue30KernelLogsRuntime: the kernel's log says at start which
// runtime its workers' cells run on.
func TestIssue30KernelLogsRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kernel")
	}
	tag := newTag(t)
	dir := t.TempDir()
	conn := writeConnectionFile(t, dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(dir, "kernel.log")
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	k := exec.Command(exe, "kernel", conn)
	k.Env = append(os.Environ(), beMainEnv+"=1", tagEnv+"="+tag, "JUPYTER_DATA_DIR="+dir)
	k.Stderr = log
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range tagged(tag) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
		k.Wait()
	})
	want := `msg="gotrain: starting" version=` + version + ` runtime=` + strconv.Quote(cells.Runtime())
	waitFor(t, 30*time.Second, "the kernel's start line", func() (string, bool) {
		b, _ := os.ReadFile(logFile)
		return string(b), strings.Contains(string(b), want)
	})
}

// TestIssue36BuildNotice: a build without oneDNN says so at session start
// (the kernel shows buildNotice under the first cell), and one with it says
// nothing. The test command runs this under -tags nodnnl too.
func TestIssue36BuildNotice(t *testing.T) {
	conv, oneDNN := graph.ConvBackend()
	notice := buildNotice()
	if oneDNN != (notice == "") {
		t.Errorf("buildNotice() = %q in a build whose convolutions are %q", notice, conv)
	}
	if !oneDNN && !strings.Contains(notice, conv) {
		t.Errorf("buildNotice() = %q, want it to name the convolutions' backend %q", notice, conv)
	}
}
