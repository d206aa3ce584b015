//go:build !race

package session

import (
	"strings"
	"testing"
	"time"
)

// This test cannot run under the race detector: yaegi v0.16.1's
// ExecuteWithContext writes its named results from the evaluation goroutine
// after it has returned on cancellation (program.go:197 against :203), a
// race inside yaegi that only the forced stop exercises.

// A tight loop has no safe point; the second interrupt cancels the
// interpreter, which yaegi only allows at the price of earlier closures.
func TestInterruptTightLoop(t *testing.T) {
	s := newSession(t)
	mustRun(t, s, "n := 0")
	done := executeAsync(s, "for {\n\tn++\n}")
	time.Sleep(100 * time.Millisecond)
	s.Interrupt()
	time.Sleep(100 * time.Millisecond)
	s.Interrupt()
	select {
	case res := <-done:
		if res.Err == nil || res.Err.Name != "Interrupted" || !strings.Contains(res.Err.Value, "without a safe point") {
			t.Fatalf("got %+v, want Interrupted without a safe point", res.Err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("tight loop did not stop within 2s of the second interrupt")
	}
	if got := mustRun(t, s, "1+1"); got != "2" {
		t.Errorf("after forced stop: 1+1 = %q, want 2", got)
	}
}
