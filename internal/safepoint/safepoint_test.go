package safepoint

import (
	"errors"
	"testing"
	"time"
)

func TestRaiseClear(t *testing.T) {
	Clear()
	if Raised() || Err() != nil {
		t.Fatal("flag raised before Raise")
	}
	Raise()
	Raise() // a second raise must not close the channel twice
	if err := Err(); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Err() = %v, want ErrInterrupted", err)
	}
	if Handled() != 1 {
		t.Fatalf("Handled() = %d, want 1", Handled())
	}
	Clear()
	if Raised() || Handled() != 0 {
		t.Fatal("flag still raised after Clear")
	}
}

func TestSleepWakesOnRaise(t *testing.T) {
	Clear()
	defer Clear()
	got := make(chan any, 1)
	go func() {
		defer func() { got <- recover() }()
		Sleep(time.Hour)
	}()
	time.Sleep(10 * time.Millisecond)
	Raise()
	select {
	case v := <-got:
		if v != ErrInterrupted {
			t.Fatalf("Sleep panicked with %v, want ErrInterrupted", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Sleep did not return after Raise")
	}
}

func TestCheckPanicsOnlyWhenRaised(t *testing.T) {
	Clear()
	defer Clear()
	Check() // must not panic
	Raise()
	defer func() {
		if r := recover(); r != ErrInterrupted {
			t.Fatalf("Check panicked with %v, want ErrInterrupted", r)
		}
	}()
	Check()
	t.Fatal("Check did not panic with an interrupt pending")
}
