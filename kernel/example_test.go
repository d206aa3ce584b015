package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/kernel/internal/kerneltest"
)

// shout is a tiny Executor: a cell prints its code in capitals and its
// value is the code's length.
type shout struct{}

func (shout) Execute(_ context.Context, req kernel.ExecuteRequest, out kernel.Output) kernel.ExecuteResult {
	out.Stream("stdout", strings.ToUpper(req.Code)+"\n")
	return kernel.ExecuteResult{Value: kernel.MIMEBundle{"text/plain": fmt.Sprintf("%.1f", float64(len(req.Code)))}}
}
func (shout) Complete(code string, pos int) kernel.CompleteResult { return kernel.CompleteResult{} }
func (shout) Inspect(code string, pos, detail int) kernel.InspectResult {
	return kernel.InspectResult{}
}
func (shout) IsComplete(code string) kernel.IsCompleteResult {
	return kernel.IsCompleteResult{Status: "complete"}
}
func (shout) Interrupt() {}

func ExampleReadConnectionFile() {
	dir, _ := os.MkdirTemp("", "kernel")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kernel-1.json")
	os.WriteFile(path, []byte(`{"transport": "tcp", "ip": "127.0.0.1", "shell_port": 50001,
		"control_port": 50002, "stdin_port": 50003, "iopub_port": 50004, "hb_port": 50005,
		"key": "a0436f6c", "signature_scheme": "hmac-sha256"}`), 0o600)

	ci, err := kernel.ReadConnectionFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ci.Transport, ci.IP, ci.ShellPort, ci.SignatureScheme)

	os.WriteFile(path, []byte(`{"ip": "127.0.0.1", "key": "k", "signature_scheme": "hmac-md5"}`), 0o600)
	_, err = kernel.ReadConnectionFile(path)
	fmt.Println(strings.Replace(err.Error(), path, "FILE", 1))
	// Output:
	// tcp 127.0.0.1 50001 hmac-sha256
	// kernel: connection file FILE: unknown signature_scheme "hmac-md5" (want "hmac-sha256")
}

// ExampleKernel_Run serves an Executor and drives it with a client, as a
// notebook front end would.
func ExampleKernel_Run() {
	k, err := kernel.New(kernel.Config{
		// Zero ports: the kernel picks free ones; Connection reports them.
		Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: "secret", SignatureScheme: "hmac-sha256"},
		Logger:     slog.New(slog.DiscardHandler),
	}, shout{})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- k.Run(context.Background()) }()

	c, err := kerneltest.Dial(endpoints(k.Connection()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.Ready(10 * time.Second)
	id, _ := c.Send(kerneltest.Shell, "execute_request", map[string]any{"code": "hello"})
	reply, _ := c.ReplyTo(kerneltest.Shell, id, 10*time.Second)
	io, _ := c.WaitIdle(id, 10*time.Second)
	for _, m := range io {
		switch m.Type() {
		case "stream":
			fmt.Print("stream: ", m.Content["text"])
		case "execute_result":
			fmt.Println("result:", m.Content["data"].(map[string]any)["text/plain"])
		}
	}
	fmt.Println(reply.Type(), reply.Content["status"], reply.Content["execution_count"])

	k.Shutdown(context.Background())
	fmt.Println(errors.Is(<-done, kernel.ErrClosed))
	// Output:
	// stream: HELLO
	// result: 5.0
	// execute_reply ok 1
	// true
}

// ExampleCommOpenFunc registers a comm target that answers each message.
func ExampleCommOpenFunc() {
	k, err := kernel.New(kernel.Config{
		Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: "secret", SignatureScheme: "hmac-sha256"},
		Logger:     slog.New(slog.DiscardHandler),
		CommTargets: map[string]kernel.CommOpenFunc{
			"progress": func(c *kernel.Comm, data map[string]any) {
				c.OnMsg(func(d map[string]any) {
					c.Send(map[string]any{"percent": fmt.Sprintf("%.1f", 100*d["done"].(float64)/d["total"].(float64))})
				})
			},
		},
	}, shout{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close()
	go k.Run(context.Background())
	c, _ := kerneltest.Dial(endpoints(k.Connection()))
	defer c.Close()
	c.Ready(10 * time.Second)

	c.Send(kerneltest.Shell, "comm_open", map[string]any{"comm_id": "p1", "target_name": "progress", "data": map[string]any{}})
	id, _ := c.Send(kerneltest.Shell, "comm_msg", map[string]any{"comm_id": "p1", "data": map[string]any{"done": 3, "total": 8}})
	io, _ := c.WaitIdle(id, 10*time.Second)
	for _, m := range io {
		if m.Type() == "comm_msg" {
			fmt.Println(m.Content["comm_id"], m.Content["data"])
		}
	}
	// Output:
	// p1 map[percent:37.5]
}

// ExampleKernel_OpenComm opens a comm from the kernel side, as a widget
// library does, and sends on it.
func ExampleKernel_OpenComm() {
	k, err := kernel.New(kernel.Config{
		Connection: kernel.ConnectionInfo{IP: "127.0.0.1", Key: "secret", SignatureScheme: "hmac-sha256"},
		Logger:     slog.New(slog.DiscardHandler),
	}, shout{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close()
	go k.Run(context.Background())
	c, _ := kerneltest.Dial(endpoints(k.Connection()))
	defer c.Close()
	c.Ready(10 * time.Second)
	before := len(c.AllIOPub())

	cm := k.OpenComm("jupyter.widget", map[string]any{"value": 0.25})
	cm.Send(map[string]any{"value": 0.5})
	cm.Close(nil)

	comms := func() (out []*kerneltest.Msg) {
		for _, m := range c.AllIOPub()[before:] {
			if strings.HasPrefix(m.Type(), "comm_") {
				out = append(out, m)
			}
		}
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(comms()) < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, m := range comms() {
		if v, ok := m.Content["data"].(map[string]any)["value"].(float64); ok {
			fmt.Printf("%s value=%.2f\n", m.Type(), v)
		} else {
			fmt.Println(m.Type())
		}
	}
	// Output:
	// comm_open value=0.25
	// comm_msg value=0.50
	// comm_close
}
