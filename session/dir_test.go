package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestIssue31SweepDeadSessions: at start, a session removes the folders of
// sessions whose process is gone (dead, its pid used again, from before a
// reboot) and keeps every folder it cannot judge or whose owner runs.
func TestIssue31SweepDeadSessions(t *testing.T) {
	me, ok := ownerOf(os.Getpid())
	if !ok {
		t.Skip("no /proc to tell which processes run")
	}
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := me
	dead.pid = done.Process.Pid
	reused, rebooted, elsewhere := me, me, dead
	reused.start += "1"
	rebooted.boot = "00000000-0000-0000-0000-000000000000"
	elsewhere.pidNamespace = "pid:[1]"

	dir := t.TempDir()
	cases := []struct {
		name  string
		owner string // the owner file's text; "-" for none
		swept bool
	}{
		{"live", me.String(), false},
		{"dead", dead.String(), true},
		{"pid used again", reused.String(), true},
		{"before a reboot", rebooted.String(), true},
		{"another pid namespace", elsewhere.String(), false},
		{"no owner file", "-", false},
		{"an owner file of something else", "pid 1\nuser x\n", false},
		{"an empty owner file", "", false},
	}
	for i, tc := range cases {
		d := filepath.Join(dir, dirPrefix+string(rune('a'+i)))
		if err := os.MkdirAll(filepath.Join(d, "cells"), 0o700); err != nil {
			t.Fatal(err)
		}
		if tc.owner != "-" {
			os.WriteFile(filepath.Join(d, ownerFile), []byte(tc.owner), 0o600)
		}
	}
	// Not a session's folder, though named like one.
	os.WriteFile(filepath.Join(dir, dirPrefix+"file"), nil, 0o600)
	os.Mkdir(filepath.Join(dir, "gotrain-other"), 0o700)

	removed := sweepDirs(dir)
	for i, tc := range cases {
		d := filepath.Join(dir, dirPrefix+string(rune('a'+i)))
		_, err := os.Stat(d)
		if gone := os.IsNotExist(err); gone != tc.swept || slices.Contains(removed, d) != tc.swept {
			t.Errorf("%s: swept %v, want %v", tc.name, gone, tc.swept)
		}
	}
	for _, name := range []string{dirPrefix + "file", "gotrain-other"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestIssue31NewDirNamesItsOwner: a new session folder names this process,
// so a sweep keeps it while the process runs.
func TestIssue31NewDirNamesItsOwner(t *testing.T) {
	if _, ok := ownerOf(os.Getpid()); !ok {
		t.Skip("no /proc to tell which processes run")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	d, err := newDir()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(d, ownerFile))
	if o, ok := parseOwner(b); !ok || o.pid != os.Getpid() {
		t.Fatalf("the owner file says %q", b)
	}
	if removed := sweepDirs(tmp); len(removed) > 0 {
		t.Errorf("a live session's folder was swept: %v", removed)
	}
}
