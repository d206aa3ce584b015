package display

import (
	"fmt"
	"os"
	"sync"
)

// Bundle maps a MIME type to its representation: a string for text types
// and base64-encoded images, any JSON-encodable value for application/json.
type Bundle map[string]any

// Renderer is implemented by values that choose how they are displayed.
type Renderer interface {
	Render() Bundle
}

// Sink receives what display functions show. The session provides one that
// forwards to the running cell's output; methods may be called from any
// goroutine.
type Sink interface {
	// Display shows b. A non-empty id names the display so later calls with
	// update set replace it in place.
	Display(b Bundle, id string, update bool)
	// Clear clears the cell's output, now or (wait) when new output arrives.
	Clear(wait bool)
}

var current struct {
	mu   sync.Mutex
	sink Sink
}

// SetSink installs s as the destination of every display call and returns
// the previous sink. A nil s restores the default, which prints text/plain.
func SetSink(s Sink) Sink {
	current.mu.Lock()
	defer current.mu.Unlock()
	prev := current.sink
	current.sink = s
	return prev
}

func sink() Sink {
	current.mu.Lock()
	defer current.mu.Unlock()
	if current.sink == nil {
		return stdoutSink{}
	}
	return current.sink
}

// stdoutSink is the sink outside a kernel: it prints the plain-text form.
type stdoutSink struct{}

func (stdoutSink) Display(b Bundle, _ string, _ bool) {
	if s, ok := b["text/plain"].(string); ok {
		fmt.Fprintln(os.Stdout, s)
	}
}

func (stdoutSink) Clear(bool) {}
