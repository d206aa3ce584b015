package kernel

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// request is one message being served and the channel to answer on.
type request struct {
	ch  *channel
	msg *message
}

// handlerFunc serves one request type. It runs between the busy and idle
// status messages and may panic; serve recovers.
type handlerFunc func(k *Kernel, r *request)

// newHandlers builds the dispatch table, keyed by msg_type, and the set of
// types also served on the control channel. Control serves only what is
// safe while a cell runs: it never calls the Executor except Interrupt.
func newHandlers() (map[string]handlerFunc, map[string]bool) {
	h := map[string]handlerFunc{
		"kernel_info_request": handleKernelInfo,
		"execute_request":     handleExecute,
		"is_complete_request": handleIsComplete,
		"complete_request":    handleComplete,
		"inspect_request":     handleInspect,
		"history_request":     handleHistory,
		"comm_info_request":   handleCommInfo,
		"comm_open":           handleCommOpen,
		"comm_msg":            handleCommMsg,
		"comm_close":          handleCommClose,
		"interrupt_request":   handleInterrupt,
		"shutdown_request":    handleShutdown,
	}
	ctl := map[string]bool{
		"kernel_info_request": true,
		"interrupt_request":   true,
		"shutdown_request":    true,
		"comm_info_request":   true,
		"history_request":     true,
	}
	return h, ctl
}

// replyType maps "x_request" to "x_reply".
func replyType(msgType string) string {
	return strings.TrimSuffix(msgType, "_request") + "_reply"
}

// decodeContent decodes m's content into v; errors wrap ErrProtocol.
func decodeContent(m *message, v any) error {
	if err := json.Unmarshal(m.Content, v); err != nil {
		return fmt.Errorf("%w: %s content: %v", ErrProtocol, m.Header.MsgType, err)
	}
	return nil
}

// decodeOrLog decodes the request's content and logs a failure; the
// request is then dropped without a reply, like any malformed message.
func (k *Kernel) decodeOrLog(r *request, v any) bool {
	if err := decodeContent(r.msg, v); err != nil {
		k.log.Warn("kernel: dropped message", "channel", r.ch.name, "err", err)
		return false
	}
	return true
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// Message contents. Field names follow the protocol; every reply carries
// status.

type statusContent struct {
	ExecutionState string `json:"execution_state"`
}

type abortedContent struct {
	Status string `json:"status"`
}

type okContent struct {
	Status string `json:"status"`
}

type helpLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

type languageInfo struct {
	Name           string `json:"name"`
	Version        string `json:"version"`
	MIMEType       string `json:"mimetype"`
	FileExtension  string `json:"file_extension"`
	PygmentsLexer  string `json:"pygments_lexer"`
	CodeMirrorMode string `json:"codemirror_mode"`
}

type kernelInfoContent struct {
	Status                string       `json:"status"`
	ProtocolVersion       string       `json:"protocol_version"`
	Implementation        string       `json:"implementation"`
	ImplementationVersion string       `json:"implementation_version"`
	LanguageInfo          languageInfo `json:"language_info"`
	Banner                string       `json:"banner"`
	HelpLinks             []helpLink   `json:"help_links"`
	Debugger              bool         `json:"debugger"`
	// SupportedFeatures lists the optional protocol features the kernel
	// implements (protocol 5.5, JEP 92); gotrain implements none of those
	// defined so far (the debugger, kernel subshells).
	SupportedFeatures []string `json:"supported_features"`
}

type executeRequestContent struct {
	Code            string            `json:"code"`
	Silent          bool              `json:"silent"`
	StoreHistory    *bool             `json:"store_history"` // default true
	UserExpressions map[string]string `json:"user_expressions"`
	AllowStdin      *bool             `json:"allow_stdin"`   // default true
	StopOnError     *bool             `json:"stop_on_error"` // default true
}

type executeInputContent struct {
	Code           string `json:"code"`
	ExecutionCount int    `json:"execution_count"`
}

type errorContent struct {
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

func newErrorContent(e *ExecError) *errorContent {
	tb := e.Traceback
	if tb == nil {
		tb = []string{}
	}
	return &errorContent{EName: e.Name, EValue: e.Value, Traceback: tb}
}

type executeReplyContent struct {
	Status          string         `json:"status"`
	ExecutionCount  int            `json:"execution_count"`
	UserExpressions map[string]any `json:"user_expressions"`
	Payload         []any          `json:"payload"`
	*errorContent                  // set when Status is "error"
}

type executeResultContent struct {
	ExecutionCount int            `json:"execution_count"`
	Data           MIMEBundle     `json:"data"`
	Metadata       map[string]any `json:"metadata"`
}

// userExpressionOK is a user_expressions entry that evaluated.
type userExpressionOK struct {
	Status   string         `json:"status"`
	Data     MIMEBundle     `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

// userExpressionError is a user_expressions entry that failed.
type userExpressionError struct {
	Status string `json:"status"`
	*errorContent
}

type codeContent struct {
	Code        string `json:"code"`
	CursorPos   int    `json:"cursor_pos"`
	DetailLevel int    `json:"detail_level"`
}

type isCompleteReplyContent struct {
	Status string `json:"status"`
	Indent string `json:"indent,omitempty"`
}

type completeReplyContent struct {
	Status      string         `json:"status"`
	Matches     []string       `json:"matches"`
	CursorStart int            `json:"cursor_start"`
	CursorEnd   int            `json:"cursor_end"`
	Metadata    map[string]any `json:"metadata"`
}

type inspectReplyContent struct {
	Status   string         `json:"status"`
	Found    bool           `json:"found"`
	Data     MIMEBundle     `json:"data"`
	Metadata map[string]any `json:"metadata"`
}

type shutdownContent struct {
	Status  string `json:"status,omitempty"`
	Restart bool   `json:"restart"`
}

type inputRequestContent struct {
	Prompt   string `json:"prompt"`
	Password bool   `json:"password"`
}

type inputReplyContent struct {
	Value string `json:"value"`
}

// goVersion is runtime.Version without the "go" prefix or build suffixes.
func goVersion() string {
	v := runtime.Version()
	if i := strings.IndexByte(v, ' '); i >= 0 {
		v = v[:i]
	}
	return strings.TrimPrefix(v, "go")
}

func handleKernelInfo(k *Kernel, r *request) {
	version := k.cfg.Version
	if version == "" {
		version = Version
	}
	banner := k.cfg.Banner
	if banner == "" {
		banner = "gotrain " + version + " — Go " + goVersion() + ", interactive data-parallel training"
	}
	if k.cfg.Notice != "" {
		banner += "\n" + k.cfg.Notice
	}
	k.reply(r.ch, r.msg, "kernel_info_reply", kernelInfoContent{
		Status:                "ok",
		ProtocolVersion:       protocolVersion,
		Implementation:        "gotrain",
		ImplementationVersion: version,
		LanguageInfo: languageInfo{
			Name:           "go",
			Version:        goVersion(),
			MIMEType:       "text/x-go",
			FileExtension:  ".go",
			PygmentsLexer:  "go",
			CodeMirrorMode: "go",
		},
		Banner: banner,
		HelpLinks: []helpLink{
			{Text: "Go documentation", URL: "https://go.dev/doc/"},
			{Text: "gotrain", URL: "https://github.com/gotrain/gotrain"},
		},
		SupportedFeatures: []string{},
	})
}

func handleExecute(k *Kernel, r *request) {
	var c executeRequestContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	store := !c.Silent && boolOr(c.StoreHistory, true)
	allowStdin := boolOr(c.AllowStdin, true)
	stopOnError := boolOr(c.StopOnError, true)

	// Like ipykernel, a cell that is not stored shows the last count.
	n := k.count - 1
	if store {
		n = k.count
		k.count++
		if err := k.hist.add(n, c.Code); err != nil {
			k.log.Warn("kernel: history file", "err", err)
		}
	}
	if !c.Silent {
		k.publish(r.msg, "execute_input", executeInputContent{Code: c.Code, ExecutionCount: n})
	}
	out := &cellOutput{k: k, parent: r.msg, silent: c.Silent, allowStdin: allowStdin}
	if k.cfg.Notice != "" && !c.Silent && !k.noticed {
		k.noticed = true
		out.Stream("stderr", k.cfg.Notice+"\n")
	}
	res := k.execute(ExecuteRequest{
		Code:           c.Code,
		Silent:         c.Silent,
		StoreHistory:   store,
		AllowStdin:     allowStdin,
		ExecutionCount: n,
	}, out)

	reply := executeReplyContent{Status: "ok", ExecutionCount: n, UserExpressions: map[string]any{}, Payload: []any{}}
	if res.Err != nil {
		reply.Status = "error"
		reply.errorContent = newErrorContent(res.Err)
		if !c.Silent {
			k.publish(r.msg, "error", reply.errorContent)
			if stopOnError {
				k.abortQueued()
			}
		}
		k.reply(r.ch, r.msg, "execute_reply", reply)
		return
	}
	if res.Value != nil && !c.Silent {
		k.publish(r.msg, "execute_result", executeResultContent{ExecutionCount: n, Data: res.Value, Metadata: map[string]any{}})
		if text, ok := res.Value["text/plain"].(string); ok && store {
			k.hist.setOutput(n, text)
		}
	}
	for _, page := range res.Pages {
		reply.Payload = append(reply.Payload, map[string]any{"source": "page", "data": page, "start": 0})
	}
	for name, expr := range c.UserExpressions {
		reply.UserExpressions[name] = k.userExpression(expr, n)
	}
	k.reply(r.ch, r.msg, "execute_reply", reply)
}

// userExpression evaluates one user expression silently.
func (k *Kernel) userExpression(expr string, n int) any {
	res := k.execute(ExecuteRequest{Code: expr, Silent: true, ExecutionCount: n}, &cellOutput{k: k, silent: true})
	if res.Err != nil {
		return userExpressionError{Status: "error", errorContent: newErrorContent(res.Err)}
	}
	data := res.Value
	if data == nil {
		data = MIMEBundle{}
	}
	return userExpressionOK{Status: "ok", Data: data, Metadata: map[string]any{}}
}

// execute runs one cell on the Executor. A panic that escapes the Executor
// becomes the cell's error, so the client still gets its reply.
func (k *Kernel) execute(req ExecuteRequest, out Output) (res ExecuteResult) {
	k.mu.Lock()
	k.mu.running = true
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		k.mu.running = false
		k.mu.Unlock()
		if v := recover(); v != nil {
			stack := string(debug.Stack())
			k.log.Error("kernel: executor panicked", "panic", v, "stack", stack)
			res = ExecuteResult{Err: &ExecError{
				Name:      EnamePanic,
				Value:     fmt.Sprint(v),
				Traceback: strings.Split(stack, "\n"),
			}}
		}
	}()
	return k.exec.Execute(k.ctx, req, out)
}

// abortQueued answers the execute_requests already queued "aborted"
// after a failed cell, when they are served (the user asked to stop on
// error); other requests, such as a completion, are served normally and in
// order.
func (k *Kernel) abortQueued() { k.shellQ.abortExecutes() }

func handleIsComplete(k *Kernel, r *request) {
	var c codeContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	res := k.exec.IsComplete(c.Code)
	reply := isCompleteReplyContent{Status: res.Status}
	switch res.Status {
	case "complete", "invalid":
	case "incomplete":
		reply.Indent = res.Indent
	default:
		reply.Status = "unknown"
	}
	k.reply(r.ch, r.msg, "is_complete_reply", reply)
}

func handleComplete(k *Kernel, r *request) {
	var c codeContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	res := k.exec.Complete(c.Code, c.CursorPos)
	reply := completeReplyContent{
		Status:      "ok",
		Matches:     res.Matches,
		CursorStart: res.CursorStart,
		CursorEnd:   res.CursorEnd,
		Metadata:    res.Metadata,
	}
	if reply.Matches == nil {
		reply.Matches = []string{}
	}
	if reply.Metadata == nil {
		reply.Metadata = map[string]any{}
	}
	k.reply(r.ch, r.msg, "complete_reply", reply)
}

func handleInspect(k *Kernel, r *request) {
	var c codeContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	res := k.exec.Inspect(c.Code, c.CursorPos, c.DetailLevel)
	data := res.Data
	if data == nil || !res.Found {
		data = MIMEBundle{}
	}
	k.reply(r.ch, r.msg, "inspect_reply", inspectReplyContent{
		Status: "ok", Found: res.Found, Data: data, Metadata: map[string]any{},
	})
}

func handleInterrupt(k *Kernel, r *request) {
	k.exec.Interrupt()
	k.interruptInput()
	k.reply(r.ch, r.msg, "interrupt_reply", okContent{Status: "ok"})
}

func handleShutdown(k *Kernel, r *request) {
	var c shutdownContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	reply := shutdownContent{Status: "ok", Restart: c.Restart}
	k.reply(r.ch, r.msg, "shutdown_reply", reply)
	// Protocol 5.4 clients also watch iopub for it; older ones ignore it.
	k.publish(r.msg, "shutdown_reply", reply)
	k.mu.Lock()
	k.mu.restart = c.Restart
	k.mu.Unlock()
	select {
	case k.shutdownReq <- struct{}{}:
	default: // a shutdown is already under way
	}
}
