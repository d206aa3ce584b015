// Copyright 2018 The go-zeromq Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package zmq4

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestXPubManual checks WithXPubManual and ApplySubscription (patched for
// gotrain, see PATCHES.md): a subscription takes effect only when its
// owner applies it, the first messages given then reach the new subscriber
// alone and before anything else, and earlier subscribers see none of
// them. A Jupyter kernel relies on it to greet each new iopub client
// without repeating a status to the others.
func TestXPubManual(t *testing.T) {
	xpub := NewXPub(context.Background(), WithXPubManual()).(XPubManual)
	defer xpub.Close()
	if err := xpub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	dial := func() Socket {
		t.Helper()
		sub := NewSub(context.Background())
		t.Cleanup(func() { sub.Close() })
		if err := sub.Dial("tcp://" + xpub.Addr().String()); err != nil {
			t.Fatal(err)
		}
		if err := sub.SetOption(OptionSubscribe, ""); err != nil {
			t.Fatal(err)
		}
		return sub
	}
	send := func(s string) {
		t.Helper()
		if err := xpub.Send(NewMsgString(s)); err != nil {
			t.Fatal(err)
		}
	}
	want := func(s Socket, name, body string) {
		t.Helper()
		if got := recvWithin(t, s, 10*time.Second); len(got.Frames) != 1 || string(got.Frames[0]) != body {
			t.Fatalf("%s received %q, want %q", name, got.Frames, body)
		}
	}

	a := dial()
	subA := recvWithin(t, xpub, 10*time.Second)
	if len(subA.Frames) != 1 || string(subA.Frames[0]) != "\x01" {
		t.Fatalf("XPUB received %q, want the subscription \\x01", subA.Frames)
	}
	send("before A is applied") // A's subscription is not in effect: A must not get it
	if err := xpub.ApplySubscription(subA, NewMsgString("welcome A")); err != nil {
		t.Fatal(err)
	}
	send("one")
	want(a, "A", "welcome A")
	want(a, "A", "one")

	b := dial()
	subB := recvWithin(t, xpub, 10*time.Second)
	send("two") // before B is applied: A only
	if err := xpub.ApplySubscription(subB, NewMsgString("welcome B 1"), NewMsgString("welcome B 2")); err != nil {
		t.Fatal(err)
	}
	send("three")
	want(a, "A", "two")
	want(a, "A", "three") // not B's welcome
	want(b, "B", "welcome B 1")
	want(b, "B", "welcome B 2")
	want(b, "B", "three")

	auto := NewXPub(context.Background()).(XPubManual)
	defer auto.Close()
	if err := auto.ApplySubscription(subA); err == nil {
		t.Errorf("ApplySubscription on a socket without WithXPubManual: no error")
	}
	if err := xpub.ApplySubscription(NewMsgString("\x01")); err == nil {
		t.Errorf("ApplySubscription of a message Recv did not return: no error")
	}

	// A subscriber that left before its subscription was applied.
	c := dial()
	subC := recvWithin(t, xpub, 10*time.Second)
	c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := xpub.ApplySubscription(subC, NewMsgString("welcome C"))
		if errors.Is(err, ErrSubscriberGone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ApplySubscription for a closed subscriber: %v, want ErrSubscriberGone", err)
		}
	}
}
