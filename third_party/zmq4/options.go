// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"log"
	"time"
)

// Option configures some aspect of a ZeroMQ socket.
// (e.g. SocketIdentity, Security, ...)
type Option func(s *socket)

// WithID configures a ZeroMQ socket identity.
func WithID(id SocketIdentity) Option {
	return func(s *socket) {
		s.id = id
	}
}

// WithSecurity configures a ZeroMQ socket to use the given security mechanism.
// If the security mechanims is nil, the NULL mechanism is used.
func WithSecurity(sec Security) Option {
	return func(s *socket) {
		s.sec = sec
	}
}

// WithDialerRetry configures the time to wait before two failed attempts
// at dialing an endpoint.
func WithDialerRetry(retry time.Duration) Option {
	return func(s *socket) {
		s.retry = retry
	}
}

// WithDialerTimeout sets the maximum amount of time a dial will wait
// for a connect to complete.
func WithDialerTimeout(timeout time.Duration) Option {
	return func(s *socket) {
		s.dialer.Timeout = timeout
	}
}

// WithTimeout sets the timeout value for socket operations
func WithTimeout(timeout time.Duration) Option {
	return func(s *socket) {
		s.timeout = timeout
	}
}

// WithHandshakeTimeout sets the maximum amount of time the ZMTP greeting
// and security handshake of a new connection may take; a peer that has not
// completed it by then is disconnected. Zero means no limit. The default is
// 10 seconds. (Patched for gotrain, see PATCHES.md.)
func WithHandshakeTimeout(timeout time.Duration) Option {
	return func(s *socket) {
		s.handshake = timeout
	}
}

// WithMaxMessageSize sets the most bytes, all frames together, a message
// read from a peer may hold, as libzmq's ZMQ_MAXMSGSIZE; a peer that
// announces a larger one is disconnected before its body is read. Zero or
// less means no limit, the default. (Patched for gotrain, see PATCHES.md.)
func WithMaxMessageSize(n int64) Option {
	return func(s *socket) {
		s.maxMsgSize = max(n, 0)
	}
}

// WithMaxFrames sets the most frames a message read from a peer may hold; a
// peer that sends more is disconnected. Zero means no limit, the default.
// (Patched for gotrain, see PATCHES.md.)
func WithMaxFrames(n int) Option {
	return func(s *socket) {
		s.maxFrames = max(n, 0)
	}
}

// WithMaxConns sets the most connections a listening socket keeps, those
// still in their handshake included; a connection accepted past it is
// closed at once. Zero means no limit, the default. (Patched for gotrain,
// see PATCHES.md.)
func WithMaxConns(n int) Option {
	return func(s *socket) {
		s.maxConns = max(n, 0)
	}
}

// WithMaxSubscriptions sets the most topics a PUB or XPUB socket keeps for
// one subscriber; further subscriptions from it are ignored. Zero means no
// limit, the default. (Patched for gotrain, see PATCHES.md.)
func WithMaxSubscriptions(n int) Option {
	return func(s *socket) {
		s.maxTopics = max(n, 0)
	}
}

// WithLogger sets a dedicated log.Logger for the socket.
func WithLogger(msg *log.Logger) Option {
	return func(s *socket) {
		s.log = msg
	}
}

// WithDialerMaxRetries configures the maximum number of retries
// when dialing an endpoint (-1 means infinite retries).
func WithDialerMaxRetries(maxRetries int) Option {
	return func(s *socket) {
		s.maxRetries = maxRetries
	}
}

// WithAutomaticReconnect allows to configure a socket to automatically
// reconnect on connection loss.
func WithAutomaticReconnect(automaticReconnect bool) Option {
	return func(s *socket) {
		s.autoReconnect = automaticReconnect
	}
}

/*
// TODO(sbinet)

func WithIOThreads(threads int) Option {
	return nil
}

func WithSendBufferSize(size int) Option {
	return nil
}

func WithRecvBufferSize(size int) Option {
	return nil
}
*/

const (
	OptionSubscribe   = "SUBSCRIBE"
	OptionUnsubscribe = "UNSUBSCRIBE"
	OptionHWM         = "HWM"
)
