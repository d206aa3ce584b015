// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"context"
	"errors"
	"net"
)

// NewXPub returns a new XPUB ZeroMQ socket.
// The returned socket value is initially unbound.
func NewXPub(ctx context.Context, opts ...Option) Socket {
	xpub := &xpubSocket{newSocket(ctx, XPub, opts...)}
	xpub.sck.w = newPubMWriter(xpub.sck.ctx, xpub.sck.pubq)
	xpub.sck.r = newPubQReader(xpub.sck.ctx, true, xpub.sck.xpubManual)
	return xpub
}

// WithXPubManual makes an XPUB socket leave each subscription that Recv
// returns unapplied until its owner calls ApplySubscription, as libzmq's
// ZMQ_XPUB_MANUAL does: the owner can then send the new subscriber, and it
// alone, a first message before anything else reaches it (a Jupyter
// kernel's iopub_welcome and its latest status). Unsubscriptions still
// apply at once. Other sockets ignore it. (Patched for gotrain, see
// PATCHES.md.)
func WithXPubManual() Option {
	return func(s *socket) { s.xpubManual = true }
}

// ErrSubscriberGone is ApplySubscription's error when the subscriber that
// sent the subscription has disconnected.
var ErrSubscriberGone = errors.New("zmq4: the subscriber has disconnected")

// XPubManual is what an XPUB socket made with WithXPubManual adds to Socket.
type XPubManual interface {
	Socket
	// ApplySubscription queues first for the subscriber that sent sub, a
	// subscription message Recv returned, and no other subscriber; then it
	// applies sub, so that every later message matching it reaches that
	// subscriber too. No message sent meanwhile reaches the subscriber
	// before first. It returns ErrSubscriberGone if the subscriber has
	// disconnected, and an error if sub is not a subscription Recv returned.
	ApplySubscription(sub Msg, first ...Msg) error
}

// ApplySubscription implements XPubManual.
func (xpub *xpubSocket) ApplySubscription(sub Msg, first ...Msg) error {
	if sub.from == nil || len(sub.Frames) != 1 || len(sub.Frames[0]) == 0 || sub.Frames[0][0] != 1 {
		return errors.New("zmq4: ApplySubscription: want a subscription message that Recv returned")
	}
	if !xpub.sck.xpubManual {
		return errors.New("zmq4: ApplySubscription: the socket applies subscriptions itself; make it WithXPubManual")
	}
	return xpub.sck.w.(*pubMWriter).applySubscription(sub, first)
}

// xpubSocket is a XPUB ZeroMQ socket.
type xpubSocket struct {
	sck *socket
}

// Close closes the open Socket, as PUB's Close does.
func (xpub *xpubSocket) Close() error {
	return closePub(xpub.sck)
}

// Send puts the message on the outbound send queue.
// Send blocks until the message can be queued or the send deadline expires.
func (xpub *xpubSocket) Send(msg Msg) error {
	return xpub.sck.Send(msg)
}

// SendMulti puts the message on the outbound send queue.
// SendMulti blocks until the message can be queued or the send deadline expires.
// The message will be sent as a multipart message.
func (xpub *xpubSocket) SendMulti(msg Msg) error {
	return xpub.sck.SendMulti(msg)
}

// Recv receives a complete message: a subscription message (a first byte
// of 1 to subscribe or 0 to unsubscribe, then the topic), or any other
// message a subscriber sent.
func (xpub *xpubSocket) Recv() (Msg, error) {
	return xpub.sck.Recv()
}

// Listen connects a local endpoint to the Socket.
func (xpub *xpubSocket) Listen(ep string) error {
	return xpub.sck.Listen(ep)
}

// Dial connects a remote endpoint to the Socket.
func (xpub *xpubSocket) Dial(ep string) error {
	return xpub.sck.Dial(ep)
}

// Type returns the type of this Socket (PUB, SUB, ...)
func (xpub *xpubSocket) Type() SocketType {
	return xpub.sck.Type()
}

// Addr returns the listener's address.
// Addr returns nil if the socket isn't a listener.
func (xpub *xpubSocket) Addr() net.Addr {
	return xpub.sck.Addr()
}

// GetOption is used to retrieve an option for a socket.
func (xpub *xpubSocket) GetOption(name string) (interface{}, error) {
	return xpub.sck.GetOption(name)
}

// SetOption is used to set an option for a socket.
func (xpub *xpubSocket) SetOption(name string, value interface{}) error {
	return xpub.sck.SetOption(name, value)
}

func (xpub *xpubSocket) Topics() []string {
	return xpub.sck.topics()
}

var (
	_ Socket = (*xpubSocket)(nil)
)
