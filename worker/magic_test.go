package worker

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/kernel"
)

func TestSplitMagics(t *testing.T) {
	tests := []struct {
		name, code string
		magics     []magic
		rest       string
	}{
		{"plain Go", "x := 1\nx", nil, "x := 1\nx"},
		{"shell then Go", "!ls -l\nx := 1", []magic{{1, "!", "ls -l"}}, "\nx := 1"},
		{"comments and blanks between", "// setup\n%env A=1\n\n%time\nf()", []magic{{2, "env", "A=1"}, {4, "time", ""}}, "// setup\n\n\n\nf()"},
		{"cell magic spelling", "%%time\nf()", []magic{{1, "time", ""}}, "\nf()"},
		{"magic after Go stays Go", "x := `\n%not a magic\n`", nil, "x := `\n%not a magic\n`"},
		{"only magics", "%reset", []magic{{1, "reset", ""}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, rest := splitMagics(tt.code)
			if !slices.Equal(ms, tt.magics) || rest != tt.rest {
				t.Errorf("splitMagics(%q) = %+v, %q; want %+v, %q", tt.code, ms, rest, tt.magics, tt.rest)
			}
			if got, want := strings.Count(rest, "\n"), strings.Count(tt.code, "\n"); got != want {
				t.Errorf("rest has %d lines, the cell %d: error positions would shift", got, want)
			}
		})
	}
}

// TestMagicTable checks that every place a magic runs has its handler,
// and that no place handles a magic the table does not say runs there.
func TestMagicTable(t *testing.T) {
	handled := map[place][]string{
		inGroup:  slices.Sorted(maps.Keys(groupMagics)),
		inClient: slices.Sorted(maps.Keys(clientMagics)),
		inWorker: slices.Sorted(maps.Keys(workerMagics)),
	}
	for p, got := range handled {
		var want []string
		for _, d := range magics {
			if d.runs&p != 0 {
				want = append(want, d.name)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s handles %q; the table says %q run there", placeNames[p], got, want)
		}
	}
	seen := map[string]bool{}
	for _, d := range magics {
		if seen[d.name] || d.runs == 0 || len(d.usage) == 0 {
			t.Errorf("magic %q: a second row, no place, or no usage: %+v", d.name, d)
		}
		seen[d.name] = true
	}
}

// TestRunAt follows cells through the places: each runs its magics in
// order and passes on those that act further on, and a magic that reaches
// a place after the only one it acts at is refused.
func TestRunAt(t *testing.T) {
	tests := []struct {
		name, code string
		at         place
		ran        []string // the magics run at the place
		next       []string // the magics passed on
		done       bool
		err        string
	}{
		{"group takes its own", "%workers 2\n%reset\n%env A=1\nx", inGroup, []string{"workers", "reset"}, []string{"reset", "env"}, false, ""},
		{"group: nothing left", "%workers 2\n%replay", inGroup, []string{"workers", "replay"}, nil, true, ""},
		{"client keeps the worker's part of limit", "%help\n%limit memory 1GiB", inClient, []string{"help", "limit"}, []string{"limit"}, false, ""},
		{"client: Go code goes on", "%help\nx := 1", inClient, []string{"help"}, nil, false, ""},
		{"client without a group", "%help\n%workers 2", inClient, []string{"help"}, nil, false, "%workers: the kernel's Group runs it; this executor runs one worker's cells"},
		{"worker", "!ls\n%time\n%go mod", inWorker, []string{"!", "time", "go"}, nil, true, ""},
		{"no magics", "", inWorker, nil, nil, false, ""},
		{"unknown", "%nope", inWorker, nil, nil, false, "line 1: unknown magic %nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			next, done, err := parseCell(kernel.ExecuteRequest{Code: tt.code}).runAt(tt.at, func(m magic) *kernel.ExecError {
				ran = append(ran, m.Name)
				return nil
			})
			var names []string
			for _, m := range next.magics {
				names = append(names, m.Name)
			}
			if got := fmt.Sprint(err); tt.err != "" && (err == nil || !strings.HasPrefix(err.Value, tt.err)) || tt.err == "" && err != nil {
				t.Fatalf("runAt(%q): error %s, want %q", tt.code, got, tt.err)
			}
			if !slices.Equal(ran, tt.ran) || tt.err == "" && (!slices.Equal(names, tt.next) || done != tt.done) {
				t.Errorf("runAt(%q) ran %q, passed on %q, done %v; want %q, %q, %v", tt.code, ran, names, done, tt.ran, tt.next, tt.done)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"8GiB", 8 << 30, ""},
		{"512MiB", 512 << 20, ""},
		{"1.5GB", 1.5e9, ""},
		{"2G", 2 << 30, ""},
		{"134217728", 128 << 20, ""},
		{"1MiB", 0, "below 64MiB"},
		{"lots", 0, "want a positive number"},
		{"-1GiB", 0, "want a positive number"},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSize(%q) = %d, %v; want an error saying %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseLimit(t *testing.T) {
	if _, set, err := parseLimit(""); set || err != nil {
		t.Errorf(`parseLimit("") = set %v, %v; want a request to show`, set, err)
	}
	if n, set, err := parseLimit("memory off"); n != 0 || !set || err != nil {
		t.Errorf(`parseLimit("memory off") = %d, %v, %v`, n, set, err)
	}
	if _, _, err := parseLimit("cpu 2"); err == nil || !strings.Contains(err.Error(), "%limit memory SIZE") {
		t.Errorf(`parseLimit("cpu 2") = %v, want the usage`, err)
	}
}

func TestCrashSummary(t *testing.T) {
	stderr := "cell output\nruntime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack overflow\n"
	diag := "worker log line\n\nruntime stack:\nruntime.throw(...)\nSIGABRT: abort\nfatal error: stack overflow\n"
	got := crashSummary([]byte(stderr), []byte(diag))
	want := []string{"runtime: goroutine stack exceeds 1000000000-byte limit", "fatal error: stack overflow", "SIGABRT: abort"}
	if !slices.Equal(got, want) {
		t.Errorf("crashSummary = %q, want %q", got, want)
	}
	if got := crashSummary([]byte("a\nb\nc\nd\ne\nf\ng\n")); !slices.Equal(got, []string{"c", "d", "e", "f", "g"}) {
		t.Errorf("without a crash line: %q, want the last five lines", got)
	}
}

// FuzzReadFrame feeds arbitrary bytes to the frame reader: it returns
// frames or an error, never panics or allocates past maxFrame.
func FuzzReadFrame(f *testing.F) {
	var ok bytes.Buffer
	binary.Write(&ok, binary.BigEndian, uint32(3))
	ok.WriteString("ohi")
	f.Add(ok.Bytes())
	f.Add([]byte{0, 0, 0, 0, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		go func() {
			a.Write(data)
			a.Close()
		}()
		l := newLink(b)
		for {
			fr, err := l.read()
			if err != nil {
				break
			}
			if len(fr.body)+1 > maxFrame {
				t.Fatalf("frame of %d bytes", len(fr.body))
			}
		}
		b.Close()
	})
}

// TestReadmeMagics holds the README's table of magics to the table %help
// prints, so that the two cannot drift apart.
func TestReadmeMagics(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := helpText()
	if !strings.Contains(string(readme), "\n"+md+"\n") {
		t.Errorf("README.md's table of magics is not %%help's; want these lines, as a paragraph of their own:\n%s", md)
	}
}
