package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// exportWorkers is what a notebook's %workers lines ask of its program. A
// program cannot start its own workers as the kernel does: it is meant for
// mpirun, which starts it N times, and joins the other ranks with
// cluster.JoinMPI where the notebook said %workers N (or -np N).
type exportWorkers struct {
	np     int      // N of %workers N; 0 where the notebook has none
	cell   int      // the cell of %workers N
	mpirun []string // mpirun's arguments for the hosts (--hostfile, --host)
	off    int      // the cell of %workers off; 0 where none
}

// The names the program's workers code uses; a notebook is unlikely to
// define them.
const (
	exportJoin  = "gotrainJoinWorkers"
	exportLeave = "gotrainLeaveWorkers"
)

// exportWorkersImports are the imports the program's workers code needs.
var exportWorkersImports = []string{`"github.com/gotrain/gotrain/cluster"`, `"log"`, `"os"`}

// exportWorkersDecl is the workers code at package level.
const exportWorkersDecl = `// gotrainWorkers is this rank's place in the job mpirun started (%workers).
var gotrainWorkers *cluster.MPI

// ` + exportJoin + ` is %workers N: every rank of mpirun -np N runs the cells
// from here, and strategy.NewMultiWorkerMirrored spans the ranks.
func ` + exportJoin + `() {
	w, err := cluster.JoinMPI()
	if err != nil {
		log.Fatal(err)
	}
	gotrainWorkers = w
}

// ` + exportLeave + ` is %workers off, and the end of main: the ranks leave
// the job together, and rank 0 alone runs the cells after, as the kernel's
// one worker does.
func ` + exportLeave + `() {
	rank := gotrainWorkers.Rank()
	if err := gotrainWorkers.Close(); err != nil {
		log.Fatal(err)
	}
	gotrainWorkers = nil
	if rank != 0 {
		os.Exit(0)
	}
}`

// line returns the statement that replaces the %workers line t of cell c,
// or an error naming the cell where a program has no meaning for it.
func (w *exportWorkers) line(c exportCell, i int, t string) (string, error) {
	args := strings.Fields(strings.TrimPrefix(t, "%workers"))
	where := fmt.Sprintf("cell %d, line %d: %q", c.n, i+1, t)
	if len(args) == 1 && args[0] == "off" {
		if w.np == 0 || w.off != 0 {
			return "", fmt.Errorf("%s: no %%workers N before it to end", where)
		}
		w.off = c.n
		return exportLeave + "()", nil
	}
	np, mpirun, err := parseExportWorkers(args)
	if err != nil {
		return "", fmt.Errorf("%s: %v", where, err)
	}
	if w.np != 0 {
		return "", fmt.Errorf("%s: the program joined its workers in cell %d; a program's ranks join once (mpirun starts them), so one %%workers N per notebook, optionally followed by %%workers off", where, w.cell)
	}
	w.np, w.cell, w.mpirun = np, c.n, mpirun
	return exportJoin + "()", nil
}

// parseExportWorkers parses %workers N and %workers -np N [--hostfile
// FILE] [--host LIST] [--address ADDR] into N and the hosts' mpirun
// arguments; --address, where the kernel listens for its workers, has no
// meaning for a program.
func parseExportWorkers(args []string) (int, []string, error) {
	usage := "%workers N, %workers -np N [--hostfile FILE] [--host HOST,…] or %workers off: a program is meant for mpirun (restart and status have no meaning in a program)"
	if len(args) == 1 && !strings.HasPrefix(args[0], "-") {
		if n, err := strconv.Atoi(args[0]); err == nil && n >= 1 {
			return n, nil, nil
		}
		return 0, nil, fmt.Errorf("want %s", usage)
	}
	np := 0
	var mpirun []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		flag, value, ok := strings.Cut(arg, "=")
		name := strings.TrimLeft(flag, "-")
		switch {
		case !strings.HasPrefix(flag, "-") || !slices.Contains([]string{"np", "n", "hostfile", "host", "address"}, name):
			return 0, nil, fmt.Errorf("unexpected %q; want %s", arg, usage)
		case !ok && i+1 < len(args):
			value = args[i+1]
			i++
		case !ok:
			return 0, nil, fmt.Errorf("%s: no value; want %s", flag, usage)
		}
		switch name {
		case "np", "n":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return 0, nil, fmt.Errorf("-np: want N ≥ 1, got %q", value)
			}
			np = n
		case "hostfile", "host":
			mpirun = append(mpirun, "--"+strings.TrimLeft(flag, "-"), value)
		}
	}
	if np == 0 {
		return 0, nil, fmt.Errorf("no -np N; want %s", usage)
	}
	return np, mpirun, nil
}

// header returns the lines at the top of the program that say how to build
// and run it, where the notebook used %workers.
func (w *exportWorkers) header() string {
	if w.np == 0 {
		return ""
	}
	run := append([]string{"mpirun", "--bind-to", "none", "-np", strconv.Itoa(w.np)}, w.mpirun...)
	var b strings.Builder
	fmt.Fprintf(&b, "//\n// The notebook ran on %d workers (%%workers in cell %d), so this program is\n", w.np, w.cell)
	b.WriteString("// meant for mpirun: every rank runs it, the ranks join one job there\n")
	b.WriteString("// (cluster.JoinMPI), and strategy.NewMultiWorkerMirrored spans them.\n")
	b.WriteString("// Build it in its folder with the mpi tag (needs OpenMPI: Debian's\n")
	b.WriteString("// libopenmpi-dev and openmpi-bin), and run it under mpirun:\n//\n")
	b.WriteString("//\tgo build -tags mpi -o prog .\n")
	fmt.Fprintf(&b, "//\t%s ./prog\n//\n", strings.Join(run, " "))
	b.WriteString("// Every rank prints what it prints (mpirun --tag-output tells them apart);\n")
	if w.off != 0 {
		fmt.Fprintf(&b, "// after %%workers off (cell %d) rank 0 alone runs the cells, as the\n// kernel's one worker did, and the other ranks exit.\n", w.off)
	} else {
		b.WriteString("// the ranks leave the job together at the end of main.\n")
	}
	return b.String()
}
