// Package b is linked into plugins p2 and p3 only: its types name a's,
// and appear first in a later plugin than a's (the case that caught a
// patch that skipped collecting a module's types).
package b

import "identity/a"

// UsesT is an interface declared after a.T, naming it.
type UsesT interface{ Get() a.T }

// Holder implements UsesT.
type Holder struct{ T a.T }

// Me returns h: a method whose type names b.Holder, which first appears in
// p2, so that p3's interface asking for it must match p2's types.
func (h Holder) Me() Holder { return h }

// Get returns the held T.
func (h Holder) Get() a.T { return h.T }

// Wrapped wraps an *a.E.
type Wrapped struct{ Err *a.E }

func (w Wrapped) Error() string { return "b: " + w.Err.Error() }
func (w Wrapped) Unwrap() error { return w.Err }

// T gives the error's a.T, so that a later plugin's interface can ask for it.
func (w Wrapped) T() a.T { return a.T{N: 8} }
