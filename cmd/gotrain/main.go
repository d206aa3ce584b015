// Command gotrain is the gotrain Jupyter kernel for Go and its tools.
//
//	gotrain kernel [--memory-limit SIZE] CONNECTION_FILE
//	                                 serve one notebook session (Jupyter starts this)
//	gotrain worker --connect ADDRESS hold a kernel's session (the kernel starts this)
//	gotrain install [--user | --prefix DIR | --sys-prefix] [--name NAME] [--memory-limit SIZE]
//	gotrain bench mlp [flags]        time training steps of an MLP
//	gotrain bench gpt --data FILE [flags]
//	                                 train a small GPT on a text, as shared/bench/torch_gpt.py does
//	gotrain warm                     build what cells import once, into Go's build cache
//	gotrain export NOTEBOOK.ipynb [-o DIR] [--drop-magics]
//	                                 write a notebook's cells as a Go main package
//	gotrain version
package main

import (
	"fmt"
	"io"
	"os"
)

// version is the gotrain release; set with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"kernel":  runKernel,
	"worker":  runWorker,
	"install": runInstall,
	"bench":   runBench,
	"version": runVersion,
	"warm":    runWarm,
	"export":  runExport,
}

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "gotrain: unknown command %q\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(2)
	}
	if err := cmd(os.Args[2:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  gotrain kernel [--memory-limit SIZE] CONNECTION_FILE
  gotrain worker --connect ADDRESS
  gotrain install [--user | --prefix DIR | --sys-prefix] [--name NAME] [--memory-limit SIZE]
  gotrain bench mlp [--replicas N] [--dims 784,512,512,10] [--batch 256] [--steps S] [--dtype f32|f64]
  gotrain bench gpt --data FILE [--iters 2000] [--batch 12] [--replicas N] [--threads T] [--dtype f32|f64] [--cpuprofile FILE]
  gotrain warm
  gotrain export NOTEBOOK.ipynb [-o DIR] [--drop-magics]
  gotrain version
`)
}
