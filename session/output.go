package session

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/gotrain/gotrain/display"
	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernel"
)

// pendingLimit caps what the router keeps for the next cell while no cell
// runs, so a chatty background goroutine cannot grow memory without bound.
const pendingLimit = 64 << 10

// router sends everything cells print to the output of the cell that is
// running now. Goroutines started by earlier cells keep printing after their
// cell ended; that text is kept (up to pendingLimit bytes per stream) and
// shown at the start of the next cell, because a notebook has no other place
// where it could appear and dropping it would hide errors. Display calls
// between cells have no cell to attach to and are dropped.
type router struct {
	mu struct {
		sync.Mutex
		out     kernel.Output      // nil between cells
		pending [2]strings.Builder // stdout, stderr written between cells
		panics  []string           // "L:C: panic" lines yaegi printed during the cell
		stdin   *bufio.Reader      // over the running cell's Input; nil between cells
	}
	fallback [2]io.Writer // Options.Stdout/Stderr, for text that overflows pendingLimit
}

func newRouter(stdout, stderr io.Writer) *router {
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	return &router{fallback: [2]io.Writer{stdout, stderr}}
}

// attach makes out the destination of all output until detach, after
// flushing what was written while no cell ran.
func (r *router) attach(out kernel.Output) {
	r.mu.Lock()
	r.mu.out = out
	r.mu.panics = nil
	r.mu.stdin = bufio.NewReader(&inputReader{out: out})
	var flush [2]string
	for i := range r.mu.pending {
		flush[i] = r.mu.pending[i].String()
		r.mu.pending[i].Reset()
	}
	r.mu.Unlock()
	for i, text := range flush {
		if text != "" {
			out.Stream(streamNames[i], text)
		}
	}
}

// detach ends the cell; later output waits for the next one.
func (r *router) detach() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.out = nil
	r.mu.stdin = nil
	r.mu.panics = nil
}

// takePanics returns and forgets the panic positions seen so far.
func (r *router) takePanics() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.mu.panics
	r.mu.panics = nil
	return p
}

func (r *router) output() kernel.Output {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.out
}

var streamNames = [2]string{"stdout", "stderr"}

func (r *router) write(stream int, p []byte) {
	r.mu.Lock()
	out := r.mu.out
	if out == nil {
		b := &r.mu.pending[stream]
		if b.Len()+len(p) <= pendingLimit {
			b.Write(p)
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.fallback[stream].Write(p)
		return
	}
	r.mu.Unlock()
	out.Stream(streamNames[stream], string(p))
}

// streamWriter is the io.Writer behind os.Stdout/os.Stderr and fmt.Print*
// as cells see them.
type streamWriter struct {
	r      *router
	stream int
}

// Write is a safe point: a cell that prints in a loop stops there when
// interrupted, which is how most runaway cells are stopped.
func (w streamWriter) Write(p []byte) (int, error) {
	safepoint.Check()
	w.r.write(w.stream, p)
	return len(p), nil
}

// yaegiPanicLine matches the lines yaegi prints on its stderr while a panic
// unwinds interpreted frames, innermost first.
var yaegiPanicLine = regexp.MustCompile(`^(?:_\.go:)?\d+:\d+: panic`)

// interpStderr is yaegi's own Stderr: it takes the panic position lines out
// of the stream (during a cell they become the error's traceback) and
// forwards the rest.
type interpStderr struct{ r *router }

func (w interpStderr) Write(p []byte) (int, error) {
	var keep strings.Builder
	for _, line := range strings.SplitAfter(string(p), "\n") {
		if yaegiPanicLine.MatchString(line) {
			// Between cells the line belongs to a goroutine's panic, which
			// the go statement's guard reports in its own words.
			w.r.mu.Lock()
			if w.r.mu.out != nil {
				w.r.mu.panics = append(w.r.mu.panics, strings.TrimSpace(strings.TrimPrefix(line, "_.go:")))
			}
			w.r.mu.Unlock()
			continue
		}
		keep.WriteString(line)
	}
	if keep.Len() > 0 {
		w.r.write(1, []byte(keep.String()))
	}
	return len(p), nil
}

// stdinReader is os.Stdin and fmt.Scan's source as cells see them: each
// line comes from the front end through the running cell's Output.Input.
type stdinReader struct{ r *router }

func (s stdinReader) Read(p []byte) (int, error) {
	s.r.mu.Lock()
	in := s.r.mu.stdin
	s.r.mu.Unlock()
	if in == nil {
		return 0, io.EOF
	}
	return in.Read(p)
}

// inputReader turns Output.Input's lines into a byte stream.
type inputReader struct {
	out  kernel.Output
	rest []byte // the part of the last line that did not fit in p
}

func (in *inputReader) Read(p []byte) (int, error) {
	if len(in.rest) == 0 {
		line, err := in.out.Input("", false)
		if err != nil {
			return 0, io.EOF
		}
		in.rest = []byte(line + "\n")
	}
	n := copy(p, in.rest)
	in.rest = in.rest[n:]
	return n, nil
}

// displaySink forwards display calls to the running cell.
type displaySink struct{ r *router }

func (d displaySink) Display(b display.Bundle, id string, update bool) {
	if out := d.r.output(); out != nil {
		out.Display(kernel.MIMEBundle(b), nil, id, update)
	}
}

func (d displaySink) Clear(wait bool) {
	if out := d.r.output(); out != nil {
		out.ClearOutput(wait)
	}
}
