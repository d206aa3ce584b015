package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gotrain/gotrain/kernel"
	kt "github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

type obj = map[string]any

// TestDispatch sends every request type on the channels that serve it and
// checks the reply and that busy and idle bracket the request on iopub.
func TestDispatch(t *testing.T) {
	h := start(t, nil)
	goVer := strings.TrimPrefix(strings.Fields(runtime.Version())[0], "go")
	tests := []struct {
		name      string
		ch        kt.Channel
		msgType   string
		content   obj
		replyType string
		check     func(t *testing.T, c obj)
	}{
		{"kernel_info on shell", kt.Shell, "kernel_info_request", nil, "kernel_info_reply", func(t *testing.T, c obj) {
			li := c["language_info"].(obj)
			want := obj{"status": "ok", "protocol_version": "5.5", "implementation": "gotrain", "implementation_version": kernel.Version}
			for k, v := range want {
				if c[k] != v {
					t.Errorf("%s = %v, want %v", k, c[k], v)
				}
			}
			wantLI := obj{"name": "go", "version": goVer, "mimetype": "text/x-go", "file_extension": ".go", "pygments_lexer": "go", "codemirror_mode": "go"}
			if !reflect.DeepEqual(li, wantLI) {
				t.Errorf("language_info = %v, want %v", li, wantLI)
			}
			links := fmt.Sprint(c["help_links"])
			if !strings.Contains(links, "https://go.dev/doc/") || !strings.Contains(links, "github.com/gotrain/gotrain") {
				t.Errorf("help_links = %s", links)
			}
			if c["banner"] == "" {
				t.Errorf("empty banner")
			}
		}},
		{"kernel_info on control", kt.Control, "kernel_info_request", nil, "kernel_info_reply", func(t *testing.T, c obj) {
			if c["protocol_version"] != "5.5" || !reflect.DeepEqual(c["supported_features"], []any{}) {
				t.Errorf("protocol_version = %v, supported_features = %#v, want 5.5 and []", c["protocol_version"], c["supported_features"])
			}
		}},
		{"execute", kt.Shell, "execute_request", obj{"code": "1+1"}, "execute_reply", func(t *testing.T, c obj) {
			if c["status"] != "ok" || c["execution_count"] != 1.0 {
				t.Errorf("reply = %v, want status ok, execution_count 1", c)
			}
		}},
		{"is_complete incomplete", kt.Shell, "is_complete_request", obj{"code": "for {"}, "is_complete_reply", func(t *testing.T, c obj) {
			if want := (obj{"status": "incomplete", "indent": "\t"}); !reflect.DeepEqual(c, want) {
				t.Errorf("reply = %v, want %v", c, want)
			}
		}},
		{"is_complete invalid", kt.Shell, "is_complete_request", obj{"code": "f())"}, "is_complete_reply", func(t *testing.T, c obj) {
			if want := (obj{"status": "invalid"}); !reflect.DeepEqual(c, want) {
				t.Errorf("reply = %v, want %v", c, want)
			}
		}},
		{"is_complete unknown", kt.Shell, "is_complete_request", obj{"code": ""}, "is_complete_reply", func(t *testing.T, c obj) {
			if c["status"] != "unknown" {
				t.Errorf("reply = %v, want status unknown", c)
			}
		}},
		{"complete", kt.Shell, "complete_request", obj{"code": "fmt.Pr", "cursor_pos": 6}, "complete_reply", func(t *testing.T, c obj) {
			want := obj{"status": "ok", "matches": []any{"fmt.Printf", "fmt.Println"}, "cursor_start": 0.0, "cursor_end": 6.0, "metadata": obj{}}
			if !reflect.DeepEqual(c, want) {
				t.Errorf("reply = %v, want %v", c, want)
			}
		}},
		{"complete nothing", kt.Shell, "complete_request", obj{"code": "zz", "cursor_pos": 2}, "complete_reply", func(t *testing.T, c obj) {
			if m, ok := c["matches"].([]any); !ok || len(m) != 0 {
				t.Errorf("matches = %#v, want []", c["matches"])
			}
		}},
		{"inspect found", kt.Shell, "inspect_request", obj{"code": "fmt.Println", "cursor_pos": 5, "detail_level": 0}, "inspect_reply", func(t *testing.T, c obj) {
			if c["found"] != true || !strings.Contains(fmt.Sprint(c["data"]), "func fmt.Println") {
				t.Errorf("reply = %v", c)
			}
		}},
		{"inspect not found", kt.Shell, "inspect_request", obj{"code": "zz", "cursor_pos": 1}, "inspect_reply", func(t *testing.T, c obj) {
			if want := (obj{"status": "ok", "found": false, "data": obj{}, "metadata": obj{}}); !reflect.DeepEqual(c, want) {
				t.Errorf("reply = %v, want %v", c, want)
			}
		}},
		{"history", kt.Shell, "history_request", obj{"hist_access_type": "tail", "n": 1}, "history_reply", func(t *testing.T, c obj) {
			if c["status"] != "ok" || len(c["history"].([]any)) != 1 {
				t.Errorf("reply = %v, want one entry", c)
			}
		}},
		{"history on control", kt.Control, "history_request", obj{"hist_access_type": "search", "pattern": "1*"}, "history_reply", func(t *testing.T, c obj) {
			if c["status"] != "ok" || len(c["history"].([]any)) != 1 {
				t.Errorf("reply = %v, want one entry", c)
			}
		}},
		{"comm_info", kt.Shell, "comm_info_request", nil, "comm_info_reply", func(t *testing.T, c obj) {
			if want := (obj{"status": "ok", "comms": obj{}}); !reflect.DeepEqual(c, want) {
				t.Errorf("reply = %v, want %v", c, want)
			}
		}},
		{"comm_info on control", kt.Control, "comm_info_request", obj{"target_name": "x"}, "comm_info_reply", nil},
		{"interrupt on control", kt.Control, "interrupt_request", nil, "interrupt_reply", func(t *testing.T, c obj) {
			if c["status"] != "ok" {
				t.Errorf("reply = %v", c)
			}
		}},
		{"interrupt on shell", kt.Shell, "interrupt_request", nil, "interrupt_reply", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, io := h.request(tt.ch, tt.msgType, tt.content)
			if reply.Type() != tt.replyType {
				t.Fatalf("reply type %s, want %s", reply.Type(), tt.replyType)
			}
			if reply.Header.Version != "5.5" || reply.Header.Session == "" || !strings.HasSuffix(reply.Header.Date, "Z") || len(reply.Header.Date) != len("2006-01-02T15:04:05.000000Z") {
				t.Errorf("reply header %+v: want version 5.5, a session and a UTC date with microseconds", reply.Header)
			}
			if len(io) < 2 || types(io[:1]) != "status:busy" || types(io[len(io)-1:]) != "status:idle" {
				t.Errorf("iopub = %s, want status:busy first and status:idle last", types(io))
			}
			if tt.check != nil {
				tt.check(t, reply.Content)
			}
		})
	}
	// Drain the interrupt tokens the two interrupt requests left.
	for len(h.exec.interrupt) > 0 {
		<-h.exec.interrupt
	}
}

func TestExecute(t *testing.T) {
	h := start(t, nil)
	tests := []struct {
		name      string
		content   obj
		wantIO    string // iopub between busy and idle
		wantCount float64
		wantReply obj // fields checked in the reply
		wantReq   kernel.ExecuteRequest
	}{
		{
			name:      "output and result",
			content:   obj{"code": "print"},
			wantIO:    "execute_input stream execute_result",
			wantCount: 1,
			wantReply: obj{"status": "ok", "user_expressions": obj{}, "payload": []any{}},
			wantReq:   kernel.ExecuteRequest{Code: "print", StoreHistory: true, AllowStdin: true, ExecutionCount: 1},
		},
		{
			name:      "count grows",
			content:   obj{"code": "1+1"},
			wantIO:    "execute_input execute_result",
			wantCount: 2,
			wantReq:   kernel.ExecuteRequest{Code: "1+1", StoreHistory: true, AllowStdin: true, ExecutionCount: 2},
		},
		{
			name:      "silent broadcasts nothing and keeps the count",
			content:   obj{"code": "print", "silent": true},
			wantIO:    "",
			wantCount: 2,
			wantReq:   kernel.ExecuteRequest{Code: "print", Silent: true, AllowStdin: true, ExecutionCount: 2},
		},
		{
			name:      "store_history false keeps the count",
			content:   obj{"code": "1+1", "store_history": false, "allow_stdin": false},
			wantIO:    "execute_input execute_result",
			wantCount: 2,
			wantReq:   kernel.ExecuteRequest{Code: "1+1", ExecutionCount: 2},
		},
		{
			name:      "display update clear",
			content:   obj{"code": "display"},
			wantIO:    "execute_input display_data update_display_data clear_output stream",
			wantCount: 3,
			wantReq:   kernel.ExecuteRequest{Code: "display", StoreHistory: true, AllowStdin: true, ExecutionCount: 3},
		},
		{
			name:      "error",
			content:   obj{"code": "fail"},
			wantIO:    "execute_input error",
			wantCount: 4,
			wantReply: obj{"status": "error", "ename": "CompileError", "evalue": "1:1: undefined: x", "traceback": []any{"cell line 1: undefined: x"}},
			wantReq:   kernel.ExecuteRequest{Code: "fail", StoreHistory: true, AllowStdin: true, ExecutionCount: 4},
		},
		{
			name:      "panic in executor becomes an error",
			content:   obj{"code": "panic"},
			wantIO:    "execute_input error",
			wantCount: 5,
			wantReply: obj{"status": "error", "ename": "Panic", "evalue": "boom"},
			wantReq:   kernel.ExecuteRequest{Code: "panic", StoreHistory: true, AllowStdin: true, ExecutionCount: 5},
		},
		{
			name:      "pager payload",
			content:   obj{"code": "page"},
			wantIO:    "execute_input",
			wantCount: 6,
			wantReply: obj{"status": "ok", "user_expressions": obj{}, "payload": []any{
				obj{"source": "page", "data": obj{"text/plain": "func Println(a ...any)"}, "start": 0.0}}},
			wantReq: kernel.ExecuteRequest{Code: "page", StoreHistory: true, AllowStdin: true, ExecutionCount: 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(h.exec.Requests())
			reply, io := h.request(kt.Shell, "execute_request", tt.content)
			if got := types(io); got != strings.TrimSpace("status:busy "+tt.wantIO+" status:idle") && !(tt.wantIO == "" && got == "status:busy status:idle") {
				t.Errorf("iopub = %s, want status:busy %s status:idle", got, tt.wantIO)
			}
			if reply.Content["execution_count"] != tt.wantCount {
				t.Errorf("execution_count = %v, want %v", reply.Content["execution_count"], tt.wantCount)
			}
			for k, v := range tt.wantReply {
				if !reflect.DeepEqual(reply.Content[k], v) {
					t.Errorf("reply %s = %#v, want %#v", k, reply.Content[k], v)
				}
			}
			reqs := h.exec.Requests()
			if len(reqs) != before+1 || reqs[before] != tt.wantReq {
				t.Errorf("executor got %+v, want %+v", reqs[before:], tt.wantReq)
			}
			for _, m := range io[1:] {
				if m.Type() == "execute_input" && (m.Content["code"] != tt.content["code"] || m.Content["execution_count"] != tt.wantCount) {
					t.Errorf("execute_input = %v", m.Content)
				}
				if m.Type() == "execute_result" && m.Content["execution_count"] != tt.wantCount {
					t.Errorf("execute_result = %v, want execution_count %v", m.Content, tt.wantCount)
				}
			}
		})
	}

	t.Run("display contents", func(t *testing.T) {
		_, io := h.request(kt.Shell, "execute_request", obj{"code": "display"})
		want := []obj{
			{"data": obj{"text/plain": "0%"}, "metadata": obj{}, "transient": obj{"display_id": "bar"}},
			{"data": obj{"text/plain": "100%"}, "metadata": obj{"k": "v"}, "transient": obj{"display_id": "bar"}},
			{"wait": true},
			{"name": "stderr", "text": "done\n"},
		}
		if len(io) != 7 {
			t.Fatalf("iopub = %s", types(io))
		}
		for i, w := range want {
			if got := io[i+2].Content; !reflect.DeepEqual(got, w) {
				t.Errorf("%s content = %v, want %v", io[i+2].Type(), got, w)
			}
		}
	})
}

func TestUserExpressions(t *testing.T) {
	h := start(t, nil)
	reply, io := h.request(kt.Shell, "execute_request", obj{"code": "print", "user_expressions": obj{"two": "1+1", "bad": "x"}})
	want := obj{
		"two": obj{"status": "ok", "data": obj{"text/plain": "2"}, "metadata": obj{}},
		"bad": obj{"status": "error", "ename": "CompileError", "evalue": "1:1: undefined: x", "traceback": []any{"cell line 1: undefined: x"}},
	}
	if got := reply.Content["user_expressions"]; !reflect.DeepEqual(got, want) {
		t.Errorf("user_expressions = %v, want %v", got, want)
	}
	if got := types(io); got != "status:busy execute_input stream execute_result status:idle" {
		t.Errorf("iopub = %s: user expressions must not broadcast", got)
	}
	for _, r := range h.exec.Requests()[1:] {
		if !r.Silent || r.StoreHistory {
			t.Errorf("user expression ran as %+v, want silent without history", r)
		}
	}
}

// TestControlDuringCell checks that control answers kernel_info and
// interrupt while a cell blocks the shell.
func TestControlDuringCell(t *testing.T) {
	h := start(t, nil)
	// The cell runs once its first output arrives.
	id := h.startCell("block", "stream")
	info, _ := h.request(kt.Control, "kernel_info_request", nil)
	if info.Type() != "kernel_info_reply" {
		t.Fatalf("control reply %s", info.Type())
	}
	intr, _ := h.request(kt.Control, "interrupt_request", nil)
	if intr.Type() != "interrupt_reply" || intr.Content["status"] != "ok" {
		t.Fatalf("interrupt reply %s %v", intr.Type(), intr.Content)
	}
	reply, err := h.c.ReplyTo(kt.Shell, id, wait)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Content["status"] != "error" || reply.Content["ename"] != "Interrupted" {
		t.Errorf("execute_reply = %v, want an Interrupted error", reply.Content)
	}
	io, err := h.c.WaitIdle(id, wait)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := types(io), "status:busy execute_input stream error status:idle"; got != want {
		t.Errorf("iopub = %s, want %s", got, want)
	}
}

// TestIssue24KernelInfoPastQueuedCells holds the shell with a cell and
// queues more behind it: a client that connects meanwhile gets its
// kernel_info_reply without waiting for them (jupyter_client's
// wait_for_ready does nothing else first), while a kernel_info_request of
// the client whose cells are queued is answered after them, so that its
// replies keep their order.
func TestIssue24KernelInfoPastQueuedCells(t *testing.T) {
	h := start(t, nil)
	var sent []string
	for _, code := range []string{"gate-ok", "1+1", "print", "1+1"} {
		id, err := h.c.Send(kt.Shell, "execute_request", obj{"code": code})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, id)
	}
	own, err := h.c.Send(kt.Shell, "kernel_info_request", nil)
	if err != nil {
		t.Fatal(err)
	}
	sent = append(sent, own)
	deadline := time.Now().Add(wait)
	for kernel.QueuedShell(h.k) < len(sent)-1 {
		if time.Now().After(deadline) {
			t.Fatalf("kernel queued %d requests, want %d", kernel.QueuedShell(h.k), len(sent)-1)
		}
		time.Sleep(5 * time.Millisecond)
	}

	second := dial(t, h) // Ready: a kernel_info_request answered, and its idle came
	if n := len(h.exec.Requests()); n != 1 {
		t.Errorf("the new client was answered after %d cells ran, want while the first still ran", n)
	}
	if n := kernel.QueuedShell(h.k); n != len(sent)-1 {
		t.Errorf("%d requests queued after the new client's kernel_info, want %d still", n, len(sent)-1)
	}
	if r, err := second.Request(kt.Shell, "kernel_info_request", nil, wait); err != nil || r.Type() != "kernel_info_reply" {
		t.Fatalf("new client's second kernel_info: %v, %v", r, err)
	}

	close(h.exec.gate)
	ours := map[string]bool{}
	for _, id := range sent {
		ours[id] = true
	}
	for i := 0; i < len(sent); {
		r, err := h.c.Recv(kt.Shell, wait)
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		if !ours[r.Parent.MsgID] {
			continue // a reply to one of start's Ready probes
		}
		if r.Parent.MsgID != sent[i] {
			t.Fatalf("reply %d is to %s (%s), want to %s: replies out of order", i, r.Parent.MsgID, r.Type(), sent[i])
		}
		i++
	}
}

// TestStopOnError queues requests behind a failing cell: with stop_on_error
// the queued execute_requests are aborted and other requests still served;
// without it they run.
func TestStopOnError(t *testing.T) {
	for _, stop := range []bool{true, false} {
		t.Run(fmt.Sprintf("stop_on_error=%v", stop), func(t *testing.T) {
			h := start(t, nil)
			first, err := h.c.Send(kt.Shell, "execute_request", obj{"code": "gate", "stop_on_error": stop})
			if err != nil {
				t.Fatal(err)
			}
			var queued []string
			for _, m := range []struct {
				typ  string
				code string
			}{{"execute_request", "print"}, {"complete_request", "fmt.Pr"}, {"execute_request", "1+1"}} {
				id, err := h.c.Send(kt.Shell, m.typ, obj{"code": m.code, "cursor_pos": 6})
				if err != nil {
					t.Fatal(err)
				}
				queued = append(queued, id)
			}
			// Release the failing cell only once the kernel holds all
			// three requests, so they were "received before the error".
			deadline := time.Now().Add(wait)
			for kernel.QueuedShell(h.k) < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("kernel queued %d requests, want 3", kernel.QueuedShell(h.k))
				}
				time.Sleep(5 * time.Millisecond)
			}
			close(h.exec.gate)
			r, err := h.c.ReplyTo(kt.Shell, first, wait)
			if err != nil || r.Content["status"] != "error" {
				t.Fatalf("failing cell: reply %v, err %v", r, err)
			}
			wantStatus := []string{"aborted", "ok", "aborted"}
			if !stop {
				wantStatus = []string{"ok", "ok", "ok"}
			}
			for i, id := range queued {
				r, err := h.c.ReplyTo(kt.Shell, id, wait)
				if err != nil {
					t.Fatal(err)
				}
				if r.Content["status"] != wantStatus[i] {
					t.Errorf("queued request %d: reply %s %v, want status %s", i, r.Type(), r.Content, wantStatus[i])
				}
				io, err := h.c.WaitIdle(id, wait)
				if err != nil {
					t.Fatal(err)
				}
				if wantStatus[i] == "aborted" && types(io) != "status:busy status:idle" {
					t.Errorf("aborted request iopub = %s, want busy idle only", types(io))
				}
			}
			// The kernel serves normally afterwards.
			if r, _ := h.request(kt.Shell, "execute_request", obj{"code": "1+1"}); r.Content["status"] != "ok" {
				t.Errorf("after abort: %v", r.Content)
			}
		})
	}
}

// TestDropped sends forged and malformed messages: no reply comes, the
// drop is logged, and the next request is served.
func TestDropped(t *testing.T) {
	h := start(t, nil)
	good, _, err := h.c.Encode("kernel_info_request", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	with := func(i int, v string) [][]byte {
		f := append([][]byte(nil), good...)
		f[i] = []byte(v)
		return f
	}
	// Each message gets its own msg_id, so the replay guard drops none.
	var n int
	hdr := func(typ string) string {
		n++
		return `{"msg_id":"x-` + typ + `-` + strconv.Itoa(n) + `","session":"s","username":"u","date":"","msg_type":"` + typ + `","version":"5.5"}`
	}
	resign := func(h, p, md, c string) [][]byte { return frames(t, nil, testKey, h, p, md, c) }
	tests := []struct {
		name    string
		ch      kt.Channel
		frames  [][]byte
		wantLog string
	}{
		{"forged signature", kt.Shell, with(1, strings.Repeat("ab", 32)), "signature mismatch"},
		{"forged on control", kt.Control, with(1, strings.Repeat("cd", 32)), "signature mismatch"},
		{"tampered header", kt.Shell, with(2, strings.Replace(string(good[2]), "kernel_info", "execute", 1)), "signature mismatch"},
		{"no delimiter", kt.Shell, [][]byte{[]byte("hello")}, "no <IDS|MSG> delimiter"},
		{"too few frames", kt.Shell, good[:4], "want ≥ 5"},
		{"malformed header json", kt.Shell, resign(`{"msg_id":`, "{}", "{}", "{}"), "header"},
		{"malformed content json", kt.Shell, resign(hdr("execute_request"), "{}", "{}", `{"code": "1+1"`), "content of execute_request"},
		{"content of the wrong type", kt.Shell, resign(hdr("execute_request"), "{}", "{}", `{"code": 5}`), "execute_request content"},
		{"execute_request on control", kt.Control, resign(hdr("execute_request"), "{}", "{}", `{"code": "1+1"}`), "not served on control"},
		{"unknown type", kt.Shell, resign(hdr("frobnicate_request"), "{}", "{}", "{}"), "ignored unknown message type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := h.c.SendFrames(tt.ch, tt.frames); err != nil {
				t.Fatal(err)
			}
			// The next request is served, and nothing answered the bad one.
			reply, _ := h.request(tt.ch, "kernel_info_request", nil)
			if reply.Type() != "kernel_info_reply" {
				t.Errorf("next reply %s", reply.Type())
			}
			if m, err := h.c.Recv(tt.ch, quiet); err == nil {
				t.Errorf("got %s (parent %s) after a dropped message, want nothing", m.Type(), m.Parent.MsgID)
			}
			if !strings.Contains(h.log.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, h.log)
			}
		})
	}
	if got := len(h.exec.Requests()); got != 0 {
		t.Errorf("executor ran %d cells from dropped messages", got)
	}
}

func TestShutdownRequest(t *testing.T) {
	for _, tt := range []struct {
		ch      kt.Channel
		restart bool
	}{{kt.Control, true}, {kt.Control, false}, {kt.Shell, false}} {
		t.Run(fmt.Sprintf("%s restart=%v", tt.ch, tt.restart), func(t *testing.T) {
			h := start(t, nil)
			id, err := h.c.Send(tt.ch, "shutdown_request", obj{"restart": tt.restart})
			if err != nil {
				t.Fatal(err)
			}
			reply, err := h.c.ReplyTo(tt.ch, id, wait)
			if err != nil {
				t.Fatal(err)
			}
			if want := (obj{"status": "ok", "restart": tt.restart}); reply.Type() != "shutdown_reply" || !reflect.DeepEqual(reply.Content, want) {
				t.Errorf("reply %s %v, want shutdown_reply %v", reply.Type(), reply.Content, want)
			}
			select {
			case err := <-h.runErr:
				if !errors.Is(err, kernel.ErrClosed) {
					t.Errorf("Run = %v, want ErrClosed", err)
				}
				h.runErr <- err // for the cleanup's check
			case <-time.After(wait):
				t.Fatal("Run did not return after shutdown_request")
			}
			if h.k.RestartRequested() != tt.restart {
				t.Errorf("RestartRequested = %v, want %v", h.k.RestartRequested(), tt.restart)
			}
		})
	}
}

// TestShutdownDrains checks Shutdown lets the running cell finish and
// answer, and that Run then returns ErrClosed.
func TestShutdownDrains(t *testing.T) {
	h := start(t, nil)
	id := h.startCell("gate-ok", "execute_input")
	done := make(chan error, 1)
	go func() { done <- h.k.Shutdown(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	close(h.exec.gate)
	reply, err := h.c.ReplyTo(kt.Shell, id, wait)
	if err != nil || reply.Content["status"] != "ok" {
		t.Fatalf("running cell: reply %v, err %v", reply, err)
	}
	if _, err := h.c.WaitIdle(id, wait); err != nil {
		t.Errorf("no idle after the last cell: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown = %v", err)
	}
}

// TestCloseInterruptsCell checks Close stops a cell that blocks.
func TestCloseInterruptsCell(t *testing.T) {
	h := start(t, nil)
	h.startCell("block", "stream")
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if err := h.k.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown with an expired context = %v, want DeadlineExceeded", err)
	}
}

func TestComm(t *testing.T) {
	var opened []*kernel.Comm
	h := start(t, func(c *kernel.Config) {
		c.CommTargets = map[string]kernel.CommOpenFunc{
			"echo": func(cm *kernel.Comm, data map[string]any) {
				opened = append(opened, cm)
				cm.OnMsg(func(d map[string]any) { cm.Send(map[string]any{"echo": d["x"]}) })
				cm.OnClose(func(d map[string]any) { opened = opened[1:] })
				cm.Send(map[string]any{"hello": data["v"]})
			},
			"crash": func(*kernel.Comm, map[string]any) { panic(errors.New("opener exploded")) },
		}
	})
	open := func(id, target string) []*kt.Msg {
		mid, err := h.c.Send(kt.Shell, "comm_open", obj{"comm_id": id, "target_name": target, "data": obj{"v": 1}})
		if err != nil {
			t.Fatal(err)
		}
		io, err := h.c.WaitIdle(mid, wait)
		if err != nil {
			t.Fatal(err)
		}
		return io
	}
	info := func(target string) any {
		r, _ := h.request(kt.Shell, "comm_info_request", obj{"target_name": target})
		return r.Content["comms"]
	}

	io := open("c1", "echo")
	if got := types(io); got != "status:busy comm_msg status:idle" || !reflect.DeepEqual(io[1].Content, obj{"comm_id": "c1", "data": obj{"hello": 1.0}}) {
		t.Errorf("comm_open iopub = %s %v", got, io)
	}
	if got, want := info(""), (obj{"c1": obj{"target_name": "echo"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("comm_info = %v, want %v", got, want)
	}
	if got := info("other"); !reflect.DeepEqual(got, obj{}) {
		t.Errorf("comm_info filtered by another target = %v, want {}", got)
	}

	mid, _ := h.c.Send(kt.Shell, "comm_msg", obj{"comm_id": "c1", "data": obj{"x": "ping"}})
	io, err := h.c.WaitIdle(mid, wait)
	if err != nil {
		t.Fatal(err)
	}
	if len(io) != 3 || !reflect.DeepEqual(io[1].Content, obj{"comm_id": "c1", "data": obj{"echo": "ping"}}) {
		t.Errorf("comm_msg echo iopub = %s", types(io))
	}

	mid, _ = h.c.Send(kt.Shell, "comm_close", obj{"comm_id": "c1", "data": obj{}})
	if _, err := h.c.WaitIdle(mid, wait); err != nil {
		t.Fatal(err)
	}
	if got := info(""); !reflect.DeepEqual(got, obj{}) || len(opened) != 0 {
		t.Errorf("after comm_close: comm_info = %v, open handlers = %d", got, len(opened))
	}

	io = open("c2", "nope")
	if got := types(io); got != "status:busy comm_close status:idle" || io[1].Content["comm_id"] != "c2" {
		t.Errorf("comm_open of unknown target: iopub = %s, want a comm_close for c2", got)
	}

	// A panicking handler is recovered at the request's boundary: idle still
	// follows, the stack is logged and the kernel serves on.
	io = open("c3", "crash")
	if got := types(io); got != "status:busy comm_close status:idle" {
		t.Errorf("panicking comm target: iopub = %s, want busy comm_close idle", got)
	}
	if got := info(""); !reflect.DeepEqual(got, obj{}) {
		t.Errorf("comm_info after a panicking target = %v, want {}", got)
	}
	if l := h.log.String(); !strings.Contains(l, "opener exploded") || !strings.Contains(l, "kernel_test.TestComm") {
		t.Errorf("log lacks the panic and its stack:\n%s", l)
	}

	// A kernel-side comm shows in comm_info and closes with comm_close.
	kc := h.k.OpenComm("jupyter.widget", map[string]any{"a": 1})
	if got := info("jupyter.widget"); !reflect.DeepEqual(got, obj{kc.ID: obj{"target_name": "jupyter.widget"}}) {
		t.Errorf("comm_info after OpenComm = %v", got)
	}
	kc.Close(nil)
	if err := kc.Send(nil); err == nil {
		t.Errorf("Send after Close succeeded")
	}
}

// TestIssue31LongHistoryLine checks that a history line over the 16 MiB
// that are read back is skipped, with the lines around it kept, instead of
// failing every later start with "token too long".
func TestIssue31LongHistoryLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "history.jsonl")
	long := `{"session":2,"line":1,"input":"` + strings.Repeat("x", 20<<20) + `"}`
	body := `{"session":1,"line":1,"input":"before"}` + "\n" + long + "\n" + `{"session":1,"line":2,"input":"after"}` + "\n" + long
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, func(c *kernel.Config) { c.HistoryFile = file })
	h.request(kt.Shell, "execute_request", obj{"code": "now"})
	r, _ := h.request(kt.Shell, "history_request", obj{"hist_access_type": "tail", "n": 9})
	want := []any{[]any{1.0, 1.0, "before"}, []any{1.0, 2.0, "after"}, []any{2.0, 1.0, "now"}}
	if got := r.Content["history"]; !reflect.DeepEqual(got, want) {
		t.Errorf("history = %v, want %v", got, want)
	}
}

func TestHistory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "history.jsonl")
	// An earlier session, as another kernel left it, plus a torn line.
	if err := os.WriteFile(file, []byte(`{"session":1,"line":1,"input":"old"}`+"\n"+`{"sess`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := start(t, func(c *kernel.Config) { c.HistoryFile = file })
	for _, code := range []string{"print", "1+1", "print", "x"} {
		h.request(kt.Shell, "execute_request", obj{"code": code, "stop_on_error": false})
	}
	h.request(kt.Shell, "execute_request", obj{"code": "silent", "silent": true})
	tests := []struct {
		name    string
		content obj
		want    []any
	}{
		{"tail", obj{"hist_access_type": "tail", "n": 2}, []any{[]any{2.0, 3.0, "print"}, []any{2.0, 4.0, "x"}}},
		{"tail across sessions", obj{"hist_access_type": "tail", "n": 9}, []any{
			[]any{1.0, 1.0, "old"}, []any{2.0, 1.0, "print"}, []any{2.0, 2.0, "1+1"}, []any{2.0, 3.0, "print"}, []any{2.0, 4.0, "x"}}},
		{"range this session", obj{"hist_access_type": "range", "session": 0, "start": 2, "stop": 4}, []any{[]any{2.0, 2.0, "1+1"}, []any{2.0, 3.0, "print"}}},
		{"range to the end", obj{"hist_access_type": "range", "session": 0, "start": 4}, []any{[]any{2.0, 4.0, "x"}}},
		{"range previous session", obj{"hist_access_type": "range", "session": -1, "start": 1}, []any{[]any{1.0, 1.0, "old"}}},
		{"search", obj{"hist_access_type": "search", "pattern": "pr*"}, []any{[]any{2.0, 1.0, "print"}, []any{2.0, 3.0, "print"}}},
		{"search unique", obj{"hist_access_type": "search", "pattern": "pr*", "unique": true}, []any{[]any{2.0, 3.0, "print"}}},
		{"search n", obj{"hist_access_type": "search", "pattern": "*", "n": 2}, []any{[]any{2.0, 3.0, "print"}, []any{2.0, 4.0, "x"}}},
		{"output pairs", obj{"hist_access_type": "tail", "n": 3, "output": true}, []any{
			[]any{2.0, 2.0, []any{"1+1", "2"}}, []any{2.0, 3.0, []any{"print", "42"}}, []any{2.0, 4.0, []any{"x", nil}}}},
		{"unknown access type", obj{"hist_access_type": "bogus"}, []any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := h.request(kt.Shell, "history_request", tt.content)
			if got := r.Content["history"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("history(%v) = %v, want %v", tt.content, got, tt.want)
			}
		})
	}
	h.stop()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), `"session":2`); got != 4 {
		t.Errorf("history file has %d session-2 lines, want 4:\n%s", got, b)
	}
}

func TestInput(t *testing.T) {
	h := start(t, nil)
	id, err := h.c.Send(kt.Shell, "execute_request", obj{"code": "input"})
	if err != nil {
		t.Fatal(err)
	}
	req, err := h.c.Recv(kt.Stdin, wait)
	if err != nil {
		t.Fatal(err)
	}
	if req.Type() != "input_request" || req.Parent.MsgID != id || !reflect.DeepEqual(req.Content, obj{"prompt": "name? ", "password": false}) {
		t.Fatalf("stdin got %s parent %s %v, want input_request for %s", req.Type(), req.Parent.MsgID, req.Content, id)
	}
	// A reply to some other request is ignored; the right one is used.
	other := req.Header
	other.MsgID = "someone-else"
	h.c.SendReply(kt.Stdin, "input_reply", &other, obj{"value": "mallory"})
	h.c.SendReply(kt.Stdin, "input_reply", &req.Header, obj{"value": "gopher"})
	if _, err := h.c.ReplyTo(kt.Shell, id, wait); err != nil {
		t.Fatal(err)
	}
	io, _ := h.c.WaitIdle(id, wait)
	if len(io) < 3 || io[2].Type() != "stream" || io[2].Content["text"] != "hi gopher" {
		t.Errorf("iopub = %s, want the stream 'hi gopher'", types(io))
	}

	t.Run("reply without parent, as jupyter_client sends it", func(t *testing.T) {
		id, _ := h.c.Send(kt.Shell, "execute_request", obj{"code": "input"})
		if _, err := h.c.Recv(kt.Stdin, wait); err != nil {
			t.Fatal(err)
		}
		h.c.Send(kt.Stdin, "input_reply", obj{"value": "anon"})
		io, err := h.c.WaitIdle(id, wait)
		if err != nil {
			t.Fatal(err)
		}
		if len(io) < 3 || io[2].Content["text"] != "hi anon" {
			t.Errorf("iopub = %s, want the stream 'hi anon'", types(io))
		}
	})
	t.Run("allow_stdin false", func(t *testing.T) {
		r, _ := h.request(kt.Shell, "execute_request", obj{"code": "input", "allow_stdin": false})
		if r.Content["status"] != "error" || !strings.Contains(r.Content["evalue"].(string), "allow_stdin is false") {
			t.Errorf("reply %v, want an error saying stdin is not allowed", r.Content)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		id, _ := h.c.Send(kt.Shell, "execute_request", obj{"code": "input"})
		if _, err := h.c.Recv(kt.Stdin, wait); err != nil {
			t.Fatal(err)
		}
		h.request(kt.Control, "interrupt_request", nil)
		r, err := h.c.ReplyTo(kt.Shell, id, wait)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fmt.Sprint(r.Content["evalue"]), "interrupted") {
			t.Errorf("reply %v, want an interrupted input", r.Content)
		}
		<-h.exec.interrupt
	})
}

func TestHeartbeat(t *testing.T) {
	h := start(t, nil)
	for _, p := range []string{"ping", "\x00binary\xff"} {
		got, err := h.c.Ping(p, wait)
		if err != nil || got != p {
			t.Errorf("Ping(%q) = %q, %v", p, got, err)
		}
	}
}

func TestRunContextCancel(t *testing.T) {
	k, err := kernel.New(kernel.Config{Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: testKey, SignatureScheme: "hmac-sha256"}}, newFakeExec())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	if err := k.Run(context.Background()); !errors.Is(err, kernel.ErrClosed) {
		t.Errorf("second Run = %v, want ErrClosed", err)
	}
}

// BenchmarkExecuteRoundTrip measures one execute_request of a trivial
// cell, from send to the idle status, over loopback TCP.
func BenchmarkExecuteRoundTrip(b *testing.B) {
	k, err := kernel.New(kernel.Config{
		Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: testKey, SignatureScheme: "hmac-sha256"},
	}, newFakeExec())
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	go k.Run(context.Background())
	c, err := kt.Dial(endpoints(k.Connection()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Ready(wait); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		id, err := c.Send(kt.Shell, "execute_request", obj{"code": "1+1"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.ReplyTo(kt.Shell, id, wait); err != nil {
			b.Fatal(err)
		}
		if _, err := c.WaitIdle(id, wait); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIssue36Notice: a build's notice ends the banner and is shown on
// stderr under the first cell that is not silent, and under no other.
func TestIssue36Notice(t *testing.T) {
	const notice = "float32 convolutions run on im2col + BLAS"
	h := start(t, func(c *kernel.Config) { c.Notice = notice })
	id, _ := h.c.Send(kt.Shell, "kernel_info_request", obj{})
	info, err := h.c.ReplyTo(kt.Shell, id, wait)
	if err != nil {
		t.Fatal(err)
	}
	if banner, _ := info.Content["banner"].(string); !strings.HasSuffix(banner, "\n"+notice) {
		t.Errorf("banner = %q, want it to end with the notice", banner)
	}
	stderr := func(code string, silent bool) []string {
		t.Helper()
		id, _ := h.c.Send(kt.Shell, "execute_request", obj{"code": code, "silent": silent})
		if _, err := h.c.ReplyTo(kt.Shell, id, wait); err != nil {
			t.Fatal(err)
		}
		io, err := h.c.WaitIdle(id, wait)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range io {
			if m.Type() == "stream" && m.Content["name"] == "stderr" {
				got = append(got, m.Content["text"].(string))
			}
		}
		return got
	}
	for i, c := range []struct {
		code   string
		silent bool
		want   []string
	}{
		{"1+1", true, nil}, // a silent cell shows nothing, the notice waits
		{"1+1", false, []string{notice + "\n"}},
		{"1+1", false, nil},
		{"print", false, nil},
	} {
		if got := stderr(c.code, c.silent); !reflect.DeepEqual(got, c.want) {
			t.Errorf("cell %d (%q, silent %v): stderr %q, want %q", i, c.code, c.silent, got, c.want)
		}
	}
}
