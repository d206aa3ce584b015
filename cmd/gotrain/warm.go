package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
)

// warmCell imports what notebooks import, so that compiling it fills Go's
// build cache with those packages built as a plugin needs them.
const warmCell = `import (
	"fmt"
	"math"
	"sort"
	"strings"

	G "gorgonia.org/gorgonia"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/display"
	"github.com/gotrain/gotrain/gorgoniamodel"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)
var _ = fmt.Sprint(math.Pi, sort.Ints, strings.Fields, data.NewTensor, display.HTML, nn.NewAdam, strategy.NewMirrored, gorgoniamodel.New, G.NewGraph)`

// runWarm compiles one cell, so that the first cell on a new machine is
// not the one that builds gotrain's packages for plugins (seconds, once).
func runWarm(args []string, stdout, _ io.Writer) error {
	if len(args) != 0 {
		return fmt.Errorf("gotrain warm: takes no arguments")
	}
	start := time.Now()
	s, err := session.New(session.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: warmCell}, kernel.Discard)
	if res.Err != nil {
		return fmt.Errorf("gotrain warm: %s: %s", res.Err.Name, res.Err.Value)
	}
	fmt.Fprintf(stdout, "gotrain warm: cells build against gotrain's packages (%.1f s)\n", time.Since(start).Seconds())
	return nil
}
