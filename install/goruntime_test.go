package install_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/install/installtest"
)

// overlayEnv names an overlay for TestIssue30TypeIdentity to use instead of
// the one install/goruntime.sh makes: a candidate patch for a new Go, or a
// deliberately wrong one, to see the test fail.
const overlayEnv = "GOTRAIN_TEST_OVERLAY"

// root is the module's root, above this package's folder.
const root = ".."

func goBin(t *testing.T) string {
	t.Helper()
	g := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(g); err != nil {
		t.Skipf("no go command at %s: %v", g, err)
	}
	return g
}

// checkedVersions reads install/goruntime/VERSIONS.
func checkedVersions(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "install", "goruntime", "VERSIONS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			vs = append(vs, l)
		}
	}
	if len(vs) == 0 {
		t.Fatal("install/goruntime/VERSIONS lists no Go version")
	}
	return vs
}

// TestIssue30VersionGate: install/goruntime.sh patches the runtime only for
// a Go version listed in install/goruntime/VERSIONS, and for any other, or
// where the patch does not apply, says why on one line and prints no
// overlay.
func TestIssue30VersionGate(t *testing.T) {
	g := goBin(t)
	versions := checkedVersions(t)
	listed := slices.Contains(versions, runtime.Version())
	notIn := func(v string) string {
		return "goruntime: unpatched: " + v + " is not in install/goruntime/VERSIONS, the Go versions the patch was checked on\n"
	}
	// A Go whose runtime/type.go is not the one the patch was made against.
	fakeRoot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(fakeRoot, "src", "runtime"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fakeRoot, "src", "runtime", "type.go"), []byte("package runtime\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		env     []string
		patched bool
		said    string // what it says on stderr starts with this
	}{
		{"this Go", nil, listed, map[bool]string{true: "", false: notIn(runtime.Version())}[listed]},
		{"a later Go", []string{"GOTRAIN_GOVERSION=go1.99.0"}, false, notIn("go1.99.0")},
		{"a prefix of a listed version", []string{"GOTRAIN_GOVERSION=go1.26"}, false, notIn("go1.26")},
		{"a listed version with a suffix", []string{"GOTRAIN_GOVERSION=" + versions[0] + "-X:nodwarf5"}, false, notIn(versions[0] + "-X:nodwarf5")},
		{"a pattern", []string{"GOTRAIN_GOVERSION=go1.26.*"}, false, notIn("go1.26.*")},
		{"a listed Go the patch does not apply to", []string{"GOTRAIN_GOVERSION=" + versions[0], "GOROOT=" + fakeRoot}, false,
			"goruntime: unpatched: install/goruntime/type.go.patch does not apply to " + filepath.Join(fakeRoot, "src", "runtime", "type.go")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			overlay, said, err := installtest.Overlay(root, g, tt.env...)
			if err != nil {
				t.Fatal(err)
			}
			if got := overlay != ""; got != tt.patched {
				t.Fatalf("%v install/goruntime.sh: overlay %q (said %q), want patched %v", tt.env, overlay, said, tt.patched)
			}
			if !strings.HasPrefix(said, tt.said) || (tt.said == "") != (said == "") {
				t.Errorf("%v install/goruntime.sh said %q, want %q", tt.env, said, tt.said)
			}
			if strings.Count(said, "\n") > 1 {
				t.Errorf("%v install/goruntime.sh said %d lines, want one", tt.env, strings.Count(said, "\n"))
			}
		})
	}
}

// TestIssue30UnlistedGoBuildsUnpatched: install/build.sh, for a Go version
// outside the list, builds gotrain on the runtime as Go ships it, and the
// binary says so and why.
func TestIssue30UnlistedGoBuildsUnpatched(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gotrain")
	}
	g := goBin(t)
	bin := filepath.Join(t.TempDir(), "gotrain")
	build := exec.Command(filepath.Join(root, "install", "build.sh"), bin, "")
	build.Env = append(build.Environ(), "GOTRAIN_GOVERSION=go1.99.0", "PATH="+filepath.Dir(g)+string(filepath.ListSeparator)+os.Getenv("PATH"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("install/build.sh: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("gotrain version: %v\n%s", err, out)
	}
	want := "\nruntime: " + runtime.Version() + " unpatched: go1.99.0 is not in install/goruntime/VERSIONS, the Go versions the patch was checked on\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("gotrain version printed\n%s\nwant the line\n%s", out, want)
	}
	if patched, err := installtest.RuntimePatched(bin); err != nil || patched {
		t.Errorf("the binary's runtime is patched: %v (%v), want it as Go ships it", patched, err)
	}
}

// TestIssue30TypeIdentity builds the same host and plugins
// (testdata/identity) on Go's runtime and on the patched one, and checks
// that every type identity the host and the plugins see is the same: type
// assertions and switches, errors.As, reflect's types compared with ==,
// Implements and AssignableTo, of named, generic and composite types made
// in several plugins, and an interface declared in a later plugin naming an
// earlier plugin's type. The checks must all pass on Go's own runtime, so
// that they are right.
//
// A type a plugin's code names is one symbol for every plugin, which the
// dynamic linker resolves to the first loaded; the runtime's type table,
// which the patch changes, matters where a type is reached through an
// offset into a module's types: the method types of an interface declared
// in a later plugin, matched against an earlier plugin's methods. Those
// checks are the ones that failed on wrong patches that skipped collecting
// the types of the first plugin, or of the second, or of every plugin.
func TestIssue30TypeIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins twice")
	}
	g := goBin(t)
	overlay := os.Getenv(overlayEnv)
	if overlay != "" {
		t.Logf("the patched runtime is the overlay %s (from $%s)", overlay, overlayEnv)
	} else {
		var said string
		var err error
		overlay, said, err = installtest.Overlay(root, g)
		if err != nil {
			t.Fatal(err)
		}
		if overlay == "" {
			if !slices.Contains(checkedVersions(t), runtime.Version()) {
				t.Skipf("this Go is not among those the patch was checked on: nothing is patched (%s)", strings.TrimSpace(said))
			}
			t.Fatalf("install/goruntime.sh made no overlay for %s, which install/goruntime/VERSIONS lists: %s", runtime.Version(), said)
		}
	}
	dir := t.TempDir()
	plain := runIdentity(t, g, filepath.Join(dir, "plain"), "")
	patched := runIdentity(t, g, filepath.Join(dir, "patched"), overlay)
	if len(plain) < 40 {
		t.Fatalf("the identity host printed %d checks, want at least 40:\n%s", len(plain), strings.Join(plain, "\n"))
	}
	for _, l := range plain {
		if !strings.HasSuffix(l, ": ok") {
			t.Errorf("on Go's own runtime: %s (the check is wrong)", l)
		}
	}
	for i := range max(len(plain), len(patched)) {
		var p, q string
		if i < len(plain) {
			p = plain[i]
		}
		if i < len(patched) {
			q = patched[i]
		}
		if p != q {
			t.Errorf("patched runtime: %q, Go's own: %q", q, p)
		}
	}
}

// runIdentity builds testdata/identity's plugins and host into dir, with
// the overlay when not empty, runs the host and returns the lines it
// printed.
func runIdentity(t *testing.T, goBin, dir, overlay string) []string {
	t.Helper()
	var flags []string
	if overlay != "" {
		flags = []string{"-overlay", overlay}
	}
	builds := [][]string{
		{"-buildmode=plugin", "-o", filepath.Join(dir, "p1.so"), "./p1"},
		{"-buildmode=plugin", "-o", filepath.Join(dir, "p2.so"), "./p2"},
		{"-buildmode=plugin", "-o", filepath.Join(dir, "p3.so"), "./p3"},
		{"-o", filepath.Join(dir, "host"), "./host"},
	}
	for _, b := range builds {
		cmd := exec.Command(goBin, append(append([]string{"build"}, flags...), b...)...)
		cmd.Dir = filepath.Join("testdata", "identity")
		cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	host := filepath.Join(dir, "host")
	if patched, err := installtest.RuntimePatched(host); err != nil || patched != (overlay != "") {
		t.Fatalf("the host built with overlay %q: runtime patched %v (%v), want %v", overlay, patched, err, overlay != "")
	}
	out, err := exec.Command(host, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", host, dir, err, out)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}
