package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gotrain/gotrain/kernelspec"
	"github.com/gotrain/gotrain/worker"
)

func runInstall(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gotrain install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var w kernelspec.Where
	fs.BoolVar(&w.User, "user", false, "install for the current user only")
	fs.StringVar(&w.Prefix, "prefix", "", "install into `DIR`/share/jupyter/kernels")
	fs.BoolVar(&w.SysPrefix, "sys-prefix", false, "install into Debian Python's prefix, /usr")
	name := fs.String("name", kernelspec.DefaultName, "kernel `NAME` front ends record in notebooks")
	memLimit := fs.String("memory-limit", "", "the session's memory limit, such as `8GiB`; %limit changes it in a notebook")
	workers := fs.Int("workers", 1, "run every cell on `N` worker processes of strategy.NewMultiWorkerMirrored from the first cell (%workers changes it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("gotrain install: unexpected arguments %q", fs.Args())
	}
	dir, err := kernelspec.Dir(w, *name)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("gotrain install: cannot find this binary: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("gotrain install: %w", err)
	}
	var kernelFlags []string
	if *memLimit != "" {
		if _, err := worker.ParseSize(*memLimit); err != nil {
			return fmt.Errorf("gotrain install: --memory-limit: %w", err)
		}
		kernelFlags = append(kernelFlags, "--memory-limit", *memLimit)
	}
	if *workers < 1 {
		return fmt.Errorf("gotrain install: --workers: want N ≥ 1, got %d", *workers)
	}
	if *workers > 1 {
		kernelFlags = append(kernelFlags, "--workers", strconv.Itoa(*workers))
	}
	spec, err := kernelspec.NewSpec(exe, kernelFlags...)
	if err != nil {
		return err
	}
	if *workers > 1 {
		spec.DisplayName = fmt.Sprintf("Go (gotrain, %d workers)", *workers)
	}
	if err := kernelspec.Write(dir, spec); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "installed kernelspec %s in %s\n", *name, dir)
	return nil
}
