package session

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/traefik/yaegi/interp"

	"github.com/gotrain/gotrain/internal/safepoint"
	"github.com/gotrain/gotrain/kernel"
)

// stepSymbols stand in for a compiled training library: Step does a little
// work and checks the interrupt flag, as strategy.Run does once per step.
var stepSymbols = interp.Exports{
	"gotraintest/lib/lib": {
		"Step": reflect.ValueOf(func() int {
			safepoint.Check()
			s := 0
			for i := 0; i < 1000; i++ {
				s += i
			}
			return s
		}),
	},
}

// executeAsync starts a cell and returns a channel with its result.
func executeAsync(s *Session, code string) <-chan kernel.ExecuteResult {
	ch := make(chan kernel.ExecuteResult, 1)
	go func() {
		ch <- s.Execute(context.Background(), kernel.ExecuteRequest{Code: code}, &recorder{})
	}()
	return ch
}

func TestInterrupt(t *testing.T) {
	tests := []struct {
		name       string
		cell       string
		interrupts int
		forced     bool // the reply must advise a restart
	}{
		{"sleeping loop", "for {\n\ttime.Sleep(10 * time.Millisecond)\n}", 1, false},
		{"printing loop", "for i := 0; ; i++ {\n\tfmt.Println(i)\n}", 1, false},
		{"compiled safe point", "for {\n\tlib.Step()\n}", 1, false},
		{"blocked channel", "never := make(chan int)\n<-never", 2, true},
		{"time.After", "<-time.After(time.Hour)", 2, true},
	}
	s, err := New(Options{Symbols: []interp.Exports{stepSymbols}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustRun(t, s, "import (\n\t\"fmt\"\n\t\"time\"\n\t\"gotraintest/lib\"\n)\ncounter := 41\nnext := func() int { counter++; return counter }")
	want := 41
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := executeAsync(s, tt.cell)
			start := time.Now()
			var res kernel.ExecuteResult
		wait:
			for i := 0; ; i++ {
				if i < tt.interrupts {
					time.Sleep(100 * time.Millisecond)
					s.Interrupt()
				}
				select {
				case res = <-done:
					break wait
				case <-time.After(200 * time.Millisecond):
				}
				if time.Since(start) > 2*time.Second+time.Duration(tt.interrupts)*100*time.Millisecond {
					t.Fatalf("cell %q did not stop within 2s of the interrupt", tt.cell)
				}
			}
			if res.Err == nil || res.Err.Name != "Interrupted" {
				t.Fatalf("cell %q: got error %+v, want Interrupted", tt.cell, res.Err)
			}
			if advised := strings.Contains(res.Err.Value, "restart the kernel"); advised != tt.forced {
				t.Errorf("cell %q: reply %q; want restart advice %v", tt.cell, res.Err.Value, tt.forced)
			}
			want++
			if got := mustRun(t, s, "next()"); got != itoa(want) {
				t.Errorf("after interrupt: closure from an earlier cell returned %s, want %d (reply %v)", got, want, res.Err.Traceback)
			}
			if got := mustRun(t, s, "1+1"); got != "2" {
				t.Errorf("after interrupt: 1+1 = %q, want 2", got)
			}
		})
	}
}

func TestInterruptWithoutCell(t *testing.T) {
	s := newSession(t)
	s.Interrupt() // must not affect the next cell
	if got := mustRun(t, s, "import \"time\"\ntime.Sleep(time.Millisecond)\n3"); got != "3" {
		t.Errorf("got %q, want 3", got)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + fmtInt(n)) }

func fmtInt(n int) string {
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return fmtInt(n/10) + string(rune('0'+n%10))
}
