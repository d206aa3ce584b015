package display

import (
	"crypto/rand"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gotrain/gotrain/internal/safepoint"
)

// idPrefix makes display ids unique across kernel runs as well as within
// one: a notebook keeps outputs from earlier runs, and a frontend updates
// every output that carries a display id, so a reused "1" would overwrite
// an old output.
var idPrefix = "gotrain-" + rand.Text()[:12] + "-"

var idCount atomic.Uint64

func newDisplayID() string {
	return idPrefix + strconv.FormatUint(idCount.Add(1), 10)
}

// Handle is one output that is updated in place: Show puts it in the
// running cell, each Update replaces its content wherever it is shown
// (Jupyter's update_display_data), even from a later cell.
//
// A Handle is safe for concurrent use.
type Handle struct {
	id string // immutable

	// mu orders the sink calls, so that the first display of the handle
	// reaches the sink before any update of it.
	mu struct {
		sync.Mutex
		shown bool
	}
}

// NewHandle returns a handle with a new, unique display id. Nothing is
// shown until Show or Update.
func NewHandle() *Handle {
	return &Handle{id: newDisplayID()}
}

// ID returns the handle's display id.
func (h *Handle) ID() string { return h.id }

// Show displays v as a new output that carries the handle's id; v is
// turned into a bundle as Show (the package function) does. Showing the
// same handle twice gives two outputs that later Updates change together.
// Show is a safe point.
func (h *Handle) Show(v any) {
	safepoint.Check()
	h.send(bundleOf(v), false)
}

// Update replaces the content of every output that shows the handle. Before
// the first Show it shows v instead, since Jupyter ignores an update for an
// id it has not displayed. Update is a safe point.
func (h *Handle) Update(v any) {
	safepoint.Check()
	h.send(bundleOf(v), true)
}

// send shows b, as an update if asked and the handle has been shown. It is
// not a safe point, so the monitor can flush its final state while an
// interrupt unwinds the cell.
func (h *Handle) send(b Bundle, update bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	update = update && h.mu.shown
	h.mu.shown = true
	sink().Display(b, h.id, update)
}

// Clear clears the running cell's output: now, or when wait is set, just
// before the next output arrives, which avoids flicker when a loop clears
// and redraws.
func Clear(wait bool) {
	sink().Clear(wait)
}
