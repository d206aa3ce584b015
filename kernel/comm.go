package kernel

import (
	"fmt"
	"sync"
)

// CommOpenFunc is called, on the shell goroutine, when a front end opens a
// comm for a registered target; data is comm_open's data. It may keep c to
// send later, and set handlers with c.OnMsg and c.OnClose.
type CommOpenFunc func(c *Comm, data map[string]any)

// Comm is one open comm, a channel of custom messages between the kernel
// and a front-end object. Its methods are safe for concurrent use. A Comm
// must not be used after Close.
type Comm struct {
	ID     string // immutable
	Target string // immutable
	k      *Kernel
	mu     struct {
		sync.Mutex
		onMsg   func(data map[string]any)
		onClose func(data map[string]any)
		closed  bool
	}
}

// OnMsg sets the function called with the data of each comm_msg.
func (c *Comm) OnMsg(fn func(data map[string]any)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.onMsg = fn
}

// OnClose sets the function called when the front end closes the comm.
func (c *Comm) OnClose(fn func(data map[string]any)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.onClose = fn
}

type commContent struct {
	CommID     string         `json:"comm_id"`
	TargetName string         `json:"target_name,omitempty"`
	Data       map[string]any `json:"data"`
}

// Send publishes a comm_msg with data to the front end.
func (c *Comm) Send(data map[string]any) error {
	c.mu.Lock()
	closed := c.mu.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("kernel: comm %s: send after close", c.ID)
	}
	c.k.publish(c.k.currentParent(), "comm_msg", commContent{CommID: c.ID, Data: orEmpty(data)})
	return nil
}

// Close publishes a comm_close and forgets the comm. Closing twice is a
// no-op.
func (c *Comm) Close(data map[string]any) error {
	if !c.k.comms.remove(c) {
		return nil
	}
	c.k.publish(c.k.currentParent(), "comm_close", commContent{CommID: c.ID, Data: orEmpty(data)})
	return nil
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// OpenComm opens a comm from the kernel side for a target the front end
// has registered, publishing comm_open with data.
func (k *Kernel) OpenComm(target string, data map[string]any) *Comm {
	c := &Comm{ID: newUUID(), Target: target, k: k}
	k.comms.add(c)
	k.publish(k.currentParent(), "comm_open", commContent{CommID: c.ID, TargetName: target, Data: orEmpty(data)})
	return c
}

// currentParent is the shell request being served, the parent of messages
// a comm sends on its own.
func (k *Kernel) currentParent() *message {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mu.parent
}

// comms is the registry of open comms and of the targets front ends may
// open.
type comms struct {
	targets map[string]CommOpenFunc // immutable
	mu      struct {
		sync.Mutex
		open map[string]*Comm
	}
}

func newComms(k *Kernel, targets map[string]CommOpenFunc) *comms {
	c := &comms{targets: make(map[string]CommOpenFunc, len(targets))}
	for name, fn := range targets {
		c.targets[name] = fn
	}
	c.mu.open = map[string]*Comm{}
	return c
}

func (r *comms) add(c *Comm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.open[c.ID] = c
}

func (r *comms) get(id string) *Comm {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.open[id]
}

// remove forgets c and marks it closed; it reports whether c was open.
func (r *comms) remove(c *Comm) bool {
	r.mu.Lock()
	_, ok := r.mu.open[c.ID]
	delete(r.mu.open, c.ID)
	r.mu.Unlock()
	c.mu.Lock()
	c.mu.closed = true
	c.mu.Unlock()
	return ok
}

// info lists open comms, all or those of one target.
func (r *comms) info(target string) map[string]commInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]commInfo{}
	for id, c := range r.mu.open {
		if target == "" || c.Target == target {
			out[id] = commInfo{TargetName: c.Target}
		}
	}
	return out
}

type commInfo struct {
	TargetName string `json:"target_name"`
}

type commInfoRequestContent struct {
	TargetName string `json:"target_name"`
}

type commInfoReplyContent struct {
	Status string              `json:"status"`
	Comms  map[string]commInfo `json:"comms"`
}

func handleCommInfo(k *Kernel, r *request) {
	var c commInfoRequestContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	k.reply(r.ch, r.msg, "comm_info_reply", commInfoReplyContent{Status: "ok", Comms: k.comms.info(c.TargetName)})
}

func handleCommOpen(k *Kernel, r *request) {
	var c commContent
	if !k.decodeOrLog(r, &c) {
		return
	}
	open, ok := k.comms.targets[c.TargetName]
	if !ok || c.CommID == "" {
		// As ipykernel does: tell the front end the comm is dead at once.
		k.log.Warn("kernel: comm_open: unknown target", "target_name", c.TargetName, "comm_id", c.CommID)
		k.publish(r.msg, "comm_close", commContent{CommID: c.CommID, Data: map[string]any{}})
		return
	}
	cm := &Comm{ID: c.CommID, Target: c.TargetName, k: k}
	k.comms.add(cm)
	defer func() {
		if v := recover(); v != nil {
			// The target never set the comm up: close it on both sides,
			// then let serve log the panic with its stack.
			if k.comms.remove(cm) {
				k.publish(r.msg, "comm_close", commContent{CommID: cm.ID, Data: map[string]any{}})
			}
			panic(v)
		}
	}()
	open(cm, orEmpty(c.Data))
}

func handleCommMsg(k *Kernel, r *request) {
	cm, data := k.commOf(r, "comm_msg")
	if cm == nil {
		return
	}
	cm.mu.Lock()
	fn := cm.mu.onMsg
	cm.mu.Unlock()
	if fn != nil {
		fn(orEmpty(data))
	}
}

func handleCommClose(k *Kernel, r *request) {
	cm, data := k.commOf(r, "comm_close")
	if cm == nil {
		return
	}
	k.comms.remove(cm)
	cm.mu.Lock()
	fn := cm.mu.onClose
	cm.mu.Unlock()
	if fn != nil {
		fn(orEmpty(data))
	}
}

// commOf decodes the content of a comm_msg or comm_close request (msgType)
// and returns the comm it names with its data (nil when the message has
// none); it logs and returns nil where the content does not decode or
// names no open comm.
func (k *Kernel) commOf(r *request, msgType string) (*Comm, map[string]any) {
	var c commContent
	if !k.decodeOrLog(r, &c) {
		return nil, nil
	}
	cm := k.comms.get(c.CommID)
	if cm == nil {
		k.log.Warn("kernel: "+msgType+": no such comm", "comm_id", c.CommID)
		return nil, nil
	}
	return cm, c.Data
}
