package kernel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"unicode/utf8"
)

// maxHistoryLoad caps how many earlier entries are read back from the
// history file, so a years-old file does not slow start-up.
const maxHistoryLoad = 10000

// histEntry is one stored input. Its JSON form is also the line format of
// the history file.
type histEntry struct {
	Session int    `json:"session"`
	Line    int    `json:"line"`
	Input   string `json:"input"`
	// Output is the text/plain form of the cell's result, kept in memory
	// for history_request with output set; the file stores inputs only.
	Output *string `json:"-"`
}

// history keeps the inputs of this session and earlier ones read from the
// history file. It is safe for concurrent use: the shell worker adds while
// control may answer history_request.
type history struct {
	mu      sync.Mutex
	session int         // this kernel's session number; immutable
	entries []histEntry // in order; guarded by mu
	file    *os.File    // nil without a history file; guarded by mu
}

// maxHistoryLine is the longest history line read back; a longer one (a
// cell that pasted a data set) is skipped, since a file that cannot be read
// must not stop the kernel from starting.
const maxHistoryLine = 16 << 20

// openHistory reads earlier sessions from path, if any, and opens it for
// appending. This session's number is one more than the largest found. An
// empty path keeps history in memory only. Lines that are not entries, or
// longer than maxHistoryLine, are skipped and counted in log.
func openHistory(path string, log *slog.Logger) (*history, error) {
	h := &history{session: 1}
	if path == "" {
		return h, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("kernel: history file: %w", err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	maxSession, long := 0, 0
	for {
		line, err := readHistoryLine(r, maxHistoryLine)
		if errors.Is(err, errLineTooLong) {
			long++
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			f.Close()
			return nil, fmt.Errorf("kernel: history file %s: %w", path, err)
		}
		var e histEntry
		// A torn last line (a crash mid-write) or a foreign line is skipped
		// rather than refusing to start.
		if len(line) > 0 && json.Unmarshal(line, &e) == nil && e.Session > 0 {
			maxSession = max(maxSession, e.Session)
			h.entries = append(h.entries, e)
			if len(h.entries) > 2*maxHistoryLoad {
				h.entries = append(h.entries[:0], h.entries[len(h.entries)-maxHistoryLoad:]...)
			}
		}
		if err != nil {
			break
		}
	}
	if long > 0 {
		log.Warn("kernel: history file: skipped lines longer than the limit", "file", path, "lines", long, "limit_bytes", maxHistoryLine)
	}
	if len(h.entries) > maxHistoryLoad {
		h.entries = h.entries[len(h.entries)-maxHistoryLoad:]
	}
	h.session = maxSession + 1
	h.file = f
	return h, nil
}

// errLineTooLong is readHistoryLine's error for a line past its limit.
var errLineTooLong = errors.New("kernel: history line too long")

// readHistoryLine returns the next line of r without its newline. A line
// longer than limit is read past and not kept: it returns errLineTooLong,
// and the next call reads the line after it. At the end of r it returns
// the last, unterminated, line with io.EOF.
func readHistoryLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong // at the end, the next call returns io.EOF
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// add stores one input of this session and appends it to the file.
func (h *history) add(line int, input string) error {
	e := histEntry{Session: h.session, Line: line, Input: input}
	h.mu.Lock()
	h.entries = append(h.entries, e)
	f := h.file
	h.mu.Unlock()
	if f == nil {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("kernel: history: %w", err)
	}
	// One Write per line keeps concurrent kernels' lines whole (O_APPEND).
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("kernel: history file: %w", err)
	}
	return nil
}

// setOutput records the result text of this session's input line.
func (h *history) setOutput(line int, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := len(h.entries) - 1; i >= 0; i-- {
		if e := &h.entries[i]; e.Session == h.session && e.Line == line {
			e.Output = &text
			return
		}
	}
}

func (h *history) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		return nil
	}
	err := h.file.Close()
	h.file = nil
	if err != nil && !errors.Is(err, fs.ErrClosed) {
		return fmt.Errorf("kernel: history file: %w", err)
	}
	return nil
}

// tail returns the last n entries of all sessions.
func (h *history) tail(n int) []histEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	n = min(max(n, 0), len(h.entries))
	return append([]histEntry(nil), h.entries[len(h.entries)-n:]...)
}

// rangeOf returns the entries of one session with start ≤ line < stop. A
// session ≤ 0 counts back from this one (0 is this session); a nil stop
// means to the end.
func (h *history) rangeOf(session, start int, stop *int) []histEntry {
	if session <= 0 {
		session += h.session
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []histEntry
	for _, e := range h.entries {
		if e.Session == session && e.Line >= start && (stop == nil || e.Line < *stop) {
			out = append(out, e)
		}
	}
	return out
}

// search returns the entries whose input matches the glob pattern (as
// SQLite's GLOB, which IPython uses: * ? and [...] classes, case
// sensitive). With unique, only the latest of equal inputs is kept. n > 0
// keeps the last n results.
func (h *history) search(pattern string, unique bool, n int) []histEntry {
	if pattern == "" {
		pattern = "*"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []histEntry
	seen := map[string]bool{}
	// Walk backwards so that unique keeps the latest occurrence.
	for i := len(h.entries) - 1; i >= 0; i-- {
		e := h.entries[i]
		if !globMatch(pattern, e.Input) {
			continue
		}
		if unique {
			if seen[e.Input] {
				continue
			}
			seen[e.Input] = true
		}
		out = append(out, e)
		if n > 0 && len(out) == n {
			break
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// globMatch reports whether s matches pattern: * is any run of runes,
// newlines included, ? is one rune, [abc], [a-z] and [^a-z] are classes.
// A malformed class matches its '[' literally.
func globMatch(pattern, s string) bool {
	// Iterative matching with one backtrack point (the last *), linear in
	// practice and immune to exponential blow-up on many stars.
	var starP, starS = -1, 0
	p, i := 0, 0
	for i < len(s) {
		if p < len(pattern) {
			switch pattern[p] {
			case '*':
				starP, starS = p, i
				p++
				continue
			case '?':
				_, w := utf8.DecodeRuneInString(s[i:])
				p++
				i += w
				continue
			case '[':
				r, w := utf8.DecodeRuneInString(s[i:])
				if ok, end, valid := matchClass(pattern[p:], r); valid {
					if ok {
						p += end
						i += w
						continue
					}
				} else if s[i] == '[' {
					p++
					i++
					continue
				}
			default:
				if pattern[p] == s[i] {
					p++
					i++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last * swallow one more rune and retry.
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		p, i = starP+1, starS
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchClass matches r against the class at the start of pattern ("[...]").
// It returns whether r is in it, the class's length in bytes, and whether
// the class is well formed (closed by ']').
func matchClass(pattern string, r rune) (ok bool, end int, valid bool) {
	i := 1
	negate := false
	if i < len(pattern) && pattern[i] == '^' {
		negate = true
		i++
	}
	first := true
	for i < len(pattern) {
		if pattern[i] == ']' && !first {
			return ok != negate, i + 1, true
		}
		first = false
		lo, w := utf8.DecodeRuneInString(pattern[i:])
		i += w
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			hi, w = utf8.DecodeRuneInString(pattern[i+1:])
			i += 1 + w
		}
		if lo <= r && r <= hi {
			ok = true
		}
	}
	return false, 0, false
}

type historyRequestContent struct {
	Output         bool   `json:"output"`
	Raw            bool   `json:"raw"`
	HistAccessType string `json:"hist_access_type"`
	Session        int    `json:"session"`
	Start          int    `json:"start"`
	Stop           *int   `json:"stop"`
	N              *int   `json:"n"`
	Pattern        string `json:"pattern"`
	Unique         bool   `json:"unique"`
}

type historyReplyContent struct {
	Status  string  `json:"status"`
	History [][]any `json:"history"`
}

func handleHistory(k *Kernel, r *request) {
	var c historyRequestContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	var entries []histEntry
	switch c.HistAccessType {
	case "tail":
		n := 10 // IPython's default
		if c.N != nil {
			n = *c.N
		}
		entries = k.hist.tail(n)
	case "range":
		entries = k.hist.rangeOf(c.Session, c.Start, c.Stop)
	case "search":
		n := 0
		if c.N != nil {
			n = *c.N
		}
		entries = k.hist.search(c.Pattern, c.Unique, n)
	default:
		k.log.Warn("kernel: history_request: unknown hist_access_type", "hist_access_type", c.HistAccessType)
	}
	reply := historyReplyContent{Status: "ok", History: make([][]any, 0, len(entries))}
	for _, e := range entries {
		var in any = e.Input
		if c.Output {
			// The protocol's (input, output) pair; output is null for a
			// cell that showed no result.
			var out any
			if e.Output != nil {
				out = *e.Output
			}
			in = []any{e.Input, out}
		}
		reply.History = append(reply.History, []any{e.Session, e.Line, in})
	}
	k.reply(r.ch, r.msg, "history_reply", reply)
}
