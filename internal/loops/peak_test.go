package loops

import (
	"testing"
	"time"
)

// TestFMAPeak: each peak loop runs where it is built, and says 0 where
// not. Its figure is a benchmark's, so only its presence is checked.
func TestFMAPeak(t *testing.T) {
	for _, c := range []struct {
		lanes int
		built bool
	}{{8, hasFMALoop}, {16, hasFMALoop512}, {4, false}} {
		got := FMAPeak(c.lanes, 10*time.Millisecond)
		if (got > 0) != c.built {
			t.Errorf("FMAPeak(%d) = %v GFLOP/s in a build where the loop is %v", c.lanes, got, c.built)
		}
		t.Logf("FMAPeak(%d): %.1f GFLOP/s", c.lanes, got)
	}
}
