package main

import (
	"errors"
	"fmt"
	"io/fs"
)

var errNotFound = errors.New("not found")

var errPermission = errors.New("permission denied")

func readConfig(name string) error {
	switch name {
	case "missing.conf":
		return fmt.Errorf("read %s: %w", name, errNotFound)
	case "secret.conf":
		return fmt.Errorf("open %s: %w", name, fs.ErrPermission)
	case "locked.conf":
		return errPermission
	}
	return nil
}

func loadAll(names ...string) error {
	for _, n := range names {
		if err := readConfig(n); err != nil {
			return fmt.Errorf("loading: %w", err)
		}
	}
	return nil
}

func main() {
	for _, n := range []string{"ok.conf", "missing.conf", "secret.conf", "locked.conf"} {
		err := loadAll("base.conf", n)
		fmt.Printf("%-13s %-40v notFound=%-5v perm=%-5v fsPerm=%v\n", n, err,
			errors.Is(err, errNotFound), errors.Is(err, errPermission), errors.Is(err, fs.ErrPermission))
	}
	err := loadAll("missing.conf")
	for e := err; e != nil; e = errors.Unwrap(e) {
		fmt.Printf("%q\n", e.Error())
	}
	fmt.Println(errors.Unwrap(errNotFound) == nil, err == errNotFound)
}
