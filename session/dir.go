package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// dirPrefix begins the name of every session folder made in the temporary
// directory; each holds the session's module and builds, the cells' source
// among them.
const dirPrefix = "gotrain-session-"

// ownerFile, in a session folder, says which process owns it: its pid, the
// process's start time (so a pid used again is told apart), the boot (so a
// folder from before a reboot is) and the pid namespace (pids of another
// are not this one's to judge). A folder without it is never swept.
const ownerFile = "owner"

// owner identifies a live process across pid reuse and reboots.
type owner struct {
	pid          int
	start, boot  string // /proc/PID/stat's start time, in clock ticks after boot; the boot's ID
	pidNamespace string // as /proc/self/ns/pid names it
}

func (o owner) String() string {
	return fmt.Sprintf("pid %d\nstart %s\nboot %s\npidns %s\n", o.pid, o.start, o.boot, o.pidNamespace)
}

// parseOwner reads what owner.String wrote.
func parseOwner(b []byte) (owner, bool) {
	var o owner
	var err error
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "pid":
			o.pid, err = strconv.Atoi(v)
		case "start":
			o.start = v
		case "boot":
			o.boot = v
		case "pidns":
			o.pidNamespace = v
		default:
			return o, false
		}
		seen++
	}
	return o, err == nil && seen == 4 && o.pid > 0 && o.start != "" && o.boot != "" && o.pidNamespace != ""
}

// ownerOf describes the process pid as it runs now; false when it does not
// run, or where /proc cannot say.
func ownerOf(pid int) (owner, bool) {
	o := owner{pid: pid}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return o, false
	}
	// The command, in parentheses, may hold spaces; the fields after it
	// start at the state, field 3. The start time is field 22.
	i := bytes.LastIndexByte(stat, ')')
	fields := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(fields) < 20 {
		return o, false
	}
	o.start = fields[19]
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return o, false
	}
	o.boot = strings.TrimSpace(string(boot))
	if o.pidNamespace, err = os.Readlink("/proc/self/ns/pid"); err != nil {
		return o, false
	}
	return o, true
}

// newDir makes a session folder in the temporary directory and writes its
// owner file, after sweeping the folders of sessions whose process is gone
// (killed, or from before a reboot), which nobody else removes.
func newDir() (string, error) {
	sweepDirs(os.TempDir())
	d, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", err
	}
	if me, ok := ownerOf(os.Getpid()); ok {
		if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(me.String()), 0o600); err != nil {
			os.RemoveAll(d)
			return "", err
		}
	}
	return d, nil
}

// sweepDirs removes the session folders in dir that this user owns and
// whose owner file names a process, of this pid namespace, that no longer
// runs. A folder it cannot judge is kept. Where /proc cannot describe this
// process, nothing is removed.
func sweepDirs(dir string) (removed []string) {
	me, ok := ownerOf(os.Getpid())
	if !ok {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !stale(path, me) {
			continue
		}
		if os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}

// stale reports whether the session folder path is this user's and its
// owner is, by me's boot and pid namespace, gone.
func stale(path string, me owner) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	f, err := os.Open(filepath.Join(path, ownerFile))
	if err != nil {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, 4<<10))
	f.Close()
	if err != nil {
		return false
	}
	o, ok := parseOwner(b)
	switch {
	case !ok:
		return false
	case o.boot != me.boot:
		return true // from before a reboot
	case o.pidNamespace != me.pidNamespace:
		return false
	}
	now, running := ownerOf(o.pid)
	return !running || now.start != o.start
}
