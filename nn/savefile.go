package nn

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// tempFile is what a save writes through; tests substitute a failing one.
type tempFile interface {
	io.Writer
	Sync() error
	Close() error
	Name() string
}

// createTemp creates the temporary file of a save (a hook for tests).
var createTemp = func(dir, pattern string) (tempFile, error) { return os.CreateTemp(dir, pattern) }

// writeFileAtomic writes path through a temporary file in its folder:
// write fills it, then it is synced, renamed over path and the folder
// synced, so a failed or interrupted save leaves any previous file at path
// intact. ioError turns a failure and what was being done ("write",
// "sync", ...) into the error returned; write's own failure is "write".
// SaveCheckpoint and SaveSafetensors save through it.
func writeFileAtomic(path string, write func(io.Writer) error, ioError func(path, doing string, err error) error) (err error) {
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return ioError(path, "create temporary file", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return ioError(path, "write", err)
	}
	if err := f.Sync(); err != nil {
		return ioError(path, "sync", err)
	}
	if err := f.Close(); err != nil {
		return ioError(path, "close", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return ioError(path, "rename temporary file", err)
	}
	// The rename is durable only once the folder's entry is on disk.
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil && !errors.Is(serr, os.ErrInvalid) {
			return ioError(path, "sync folder", serr)
		}
	}
	return nil
}
