package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/graph"
)

func runVersion(args []string, stdout, _ io.Writer) error {
	if len(args) != 0 {
		return fmt.Errorf("gotrain version: takes no arguments, got %q", args)
	}
	fmt.Fprintf(stdout, "gotrain %s (%s %s/%s)\nruntime: %s\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, cells.Runtime())
	conv, _ := graph.ConvBackend()
	fmt.Fprintf(stdout, "convolutions (float32, CPU): %s\n", conv)
	return nil
}
