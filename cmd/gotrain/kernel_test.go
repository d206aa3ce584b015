package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// beMainEnv makes the test binary gotrain itself: TestMain runs main with
// the binary's arguments, so that a test starts `gotrain kernel`, and the
// kernel `gotrain worker`, without building anything.
const beMainEnv = "GOTRAIN_TEST_MAIN"

// tagEnv marks every process one test starts, and only those: the kernel,
// its workers and whatever they start inherit it. Other gotrain processes
// on the machine are neither looked at nor touched.
const tagEnv = "GOTRAIN_TEST_TAG"

func TestMain(m *testing.M) {
	if os.Getenv(beMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestIssue24NothingLeftBehind starts a kernel, waits for its workers to
// connect, then ends the kernel's parent (or the kernel itself, with
// SIGKILL), and checks that within 5 s no process of that kernel remains.
func TestIssue24NothingLeftBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kernels and workers")
	}
	tests := []struct {
		name    string
		workers int
		kill    string // "parent": the shell that started the kernel; "kernel": the kernel
	}{
		{"parent exits", 1, "parent"},
		{"parent exits, two workers", 2, "parent"},
		{"kernel killed", 1, "kernel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tag := newTag(t)
			dir := t.TempDir()
			conn := writeConnectionFile(t, dir)
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			logFile, pidFile := filepath.Join(dir, "kernel.log"), filepath.Join(dir, "kernel.pid")
			// The shell stands for jupyter_client: the kernel's parent,
			// named in JPY_PARENT_PID. It writes the kernel's pid and waits.
			sh := exec.Command("/bin/sh", "-c", `JPY_PARENT_PID=$$ "$0" kernel --workers "$1" "$2" 2>"$3" & echo $! >"$4"; wait`,
				exe, strconv.Itoa(tt.workers), conn, logFile, pidFile)
			sh.Env = append(os.Environ(), beMainEnv+"=1", tagEnv+"="+tag, "JUPYTER_DATA_DIR="+dir)
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			shDone := make(chan struct{})
			go func() { sh.Wait(); close(shDone) }()
			t.Cleanup(func() {
				for _, p := range tagged(tag) {
					syscall.Kill(p.pid, syscall.SIGKILL)
				}
				sh.Process.Kill()
				<-shDone
				if t.Failed() {
					b, _ := os.ReadFile(logFile)
					t.Logf("kernel log:\n%s", b)
				}
			})

			kernelPID := waitFor(t, 10*time.Second, "the kernel's pid", func() (int, bool) {
				b, _ := os.ReadFile(pidFile)
				pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
				return pid, err == nil && strings.HasSuffix(string(b), "\n")
			})
			waitFor(t, 2*time.Minute, fmt.Sprintf("%d workers connected", tt.workers), func() (int, bool) {
				n := 0
				for _, p := range tagged(tag) {
					if p.ppid == kernelPID && p.sockets > 0 {
						n++
					}
				}
				return n, n == tt.workers
			})
			before := tagged(tag)

			switch tt.kill {
			case "parent":
				sh.Process.Kill()
				<-shDone
			case "kernel":
				syscall.Kill(kernelPID, syscall.SIGKILL)
			}
			killed := time.Now()
			for {
				left := tagged(tag)
				if tt.kill == "kernel" {
					// The shell is alive and reaps the kernel; it is no
					// process of the kernel's.
					left = without(left, sh.Process.Pid)
				}
				if len(left) == 0 {
					t.Logf("%d processes (%v) gone %s after the kill", len(before), before, time.Since(killed).Round(time.Millisecond))
					return
				}
				if time.Since(killed) > 5*time.Second {
					t.Fatalf("5 s after the %s was killed, %v remain (of %v)", tt.kill, left, before)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestWatchParent: the watch fires when the parent pid is no longer the
// one recorded, never while it is, and there is none for a kernel that
// init started.
func TestWatchParent(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	tests := []struct {
		name   string
		parent int
		fires  bool
	}{
		{"parent alive", os.Getppid(), false},
		{"parent changed", os.Getppid() + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			defer close(done)
			select {
			case <-watchParent(logger, tt.parent, done):
				if !tt.fires {
					t.Fatalf("watchParent(%d) fired; the parent is %d", tt.parent, os.Getppid())
				}
			case <-time.After(4 * parentPoll):
				if tt.fires {
					t.Fatalf("watchParent(%d) did not fire within %s; the parent is %d", tt.parent, 4*parentPoll, os.Getppid())
				}
			}
		})
	}
	if c := watchParent(logger, 1, nil); c != nil {
		t.Errorf("watchParent(1) = %v, want nil: init's children have no parent to lose", c)
	}
}

func newTag(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	return t.Name() + "-" + hex.EncodeToString(b[:])
}

// writeConnectionFile writes a connection file with free loopback ports.
func writeConnectionFile(t *testing.T, dir string) string {
	t.Helper()
	var ports [5]int
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		defer ln.Close()
	}
	b, _ := json.Marshal(map[string]any{
		"transport": "tcp", "ip": "127.0.0.1", "key": "issue-24", "signature_scheme": "hmac-sha256",
		"shell_port": ports[0], "iopub_port": ports[1], "stdin_port": ports[2], "control_port": ports[3], "hb_port": ports[4],
	})
	path := filepath.Join(dir, "kernel.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFor polls f until it says ok, and fails the test after limit.
func waitFor[T any](t *testing.T, limit time.Duration, what string, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s (last: %v)", what, limit, v)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// process is a live process of a test.
type process struct {
	pid, ppid int
	sockets   int // open sockets: a worker's first is its link to the kernel
	cmd       string
}

func (p process) String() string {
	f := strings.Fields(p.cmd)
	if len(f) > 2 {
		f = f[:2]
	}
	if len(f) > 0 {
		f[0] = filepath.Base(f[0])
	}
	return fmt.Sprintf("%d %s", p.pid, strings.Join(f, " "))
}

// tagged lists the live processes whose environment has tagEnv=tag;
// zombies, which have exited, are not listed.
func tagged(tag string) []process {
	var ps []process
	ents, _ := os.ReadDir("/proc")
	want := []byte(tagEnv + "=" + tag)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !containsField(env, want) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state, ppid, ...
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		p := process{pid: pid}
		p.ppid, _ = strconv.Atoi(f[1])
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		p.cmd = strings.Join(strings.Fields(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))), " ")
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name())); err == nil && strings.HasPrefix(l, "socket:") {
				p.sockets++
			}
		}
		ps = append(ps, p)
	}
	return ps
}

func containsField(env, want []byte) bool {
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

func without(ps []process, pid int) []process {
	var out []process
	for _, p := range ps {
		if p.pid != pid {
			out = append(out, p)
		}
	}
	return out
}
