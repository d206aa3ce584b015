package errkind_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/gotrain/gotrain/internal/errkind"
)

func TestError(t *testing.T) {
	kind := errors.New("pkg: misuse")
	err := errkind.New(kind, "pkg: ", "layer %q: want %d channels, got %d", "conv", 3, 4)
	if got, want := err.Error(), `pkg: layer "conv": want 3 channels, got 4`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("cell 3: %w", err)
	if !errors.Is(wrapped, kind) || errors.Is(wrapped, io.EOF) {
		t.Errorf("errors.Is(%v, kind) = %v, errors.Is(..., io.EOF) = %v; want true, false", wrapped, errors.Is(wrapped, kind), errors.Is(wrapped, io.EOF))
	}
	var e *errkind.Error
	if !errors.As(wrapped, &e) || e.Kind != kind {
		t.Errorf("errors.As found %v, want the Error of kind %v", e, kind)
	}
}
