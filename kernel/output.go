package kernel

import "errors"

// errNoStdin is what Output.Input returns for a request with allow_stdin
// false, such as a notebook run by nbconvert.
var errNoStdin = errors.New("kernel: input: stdin not allowed by this execute_request (allow_stdin is false)")

// cellOutput is the Output of one execute_request: it publishes on iopub
// with the request as parent. A silent request broadcasts nothing, as the
// protocol specifies. It is safe for concurrent use: every publish goes
// through the iopub channel's mutex.
type cellOutput struct {
	k          *Kernel
	parent     *message // the execute_request; nil for user expressions
	silent     bool
	allowStdin bool
}

type streamContent struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

type displayContent struct {
	Data      MIMEBundle        `json:"data"`
	Metadata  map[string]any    `json:"metadata"`
	Transient map[string]string `json:"transient,omitempty"`
}

type clearOutputContent struct {
	Wait bool `json:"wait"`
}

func (o *cellOutput) Stream(name, text string) {
	if o.silent || text == "" {
		return
	}
	o.k.publish(o.parent, "stream", streamContent{Name: name, Text: text})
}

func (o *cellOutput) Display(data MIMEBundle, metadata map[string]any, displayID string, update bool) {
	if o.silent {
		return
	}
	if metadata == nil {
		metadata = map[string]any{}
	}
	c := displayContent{Data: data, Metadata: metadata}
	if displayID != "" {
		c.Transient = map[string]string{"display_id": displayID}
	}
	msgType := "display_data"
	if update && displayID != "" {
		msgType = "update_display_data"
	}
	o.k.publish(o.parent, msgType, c)
}

func (o *cellOutput) ClearOutput(wait bool) {
	if o.silent {
		return
	}
	o.k.publish(o.parent, "clear_output", clearOutputContent{Wait: wait})
}

func (o *cellOutput) Input(prompt string, password bool) (string, error) {
	if !o.allowStdin || o.parent == nil {
		return "", errNoStdin
	}
	return o.k.input(o.parent, prompt, password)
}
