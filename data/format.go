package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrFormat is wrapped by every error that a reader returns for malformed
// input, so callers can tell bad files from failing devices with errors.Is.
var ErrFormat = errors.New("data: malformed input")

// FormatError describes where a reader found malformed input and what it
// expected there. It wraps ErrFormat and, when a read failed, the read
// error.
type FormatError struct {
	Format string // "idx", "npy" or "csv"
	File   string // path of the file, or "" when reading an io.Reader
	// Offset is the byte offset where the expected item starts, counted
	// in the decompressed stream for gzip input. CSV errors give Line and
	// Column (both from 1) instead and set Offset to -1.
	Offset       int64
	Line, Column int
	Want, Got    string
	Err          error // the underlying read error, or nil
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("data: ")
	b.WriteString(e.Format)
	b.WriteString(": ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, "offset %d: ", e.Offset)
	} else {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	fmt.Fprintf(&b, "want %s, got %s", e.Want, e.Got)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns ErrFormat and the underlying read error, if any.
func (e *FormatError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrFormat, e.Err}
	}
	return []error{ErrFormat}
}

// loadFile opens path and reads it with read, which names path in its
// errors; a file that does not open gives "data: FORMAT: " and the open
// error.
func loadFile(path, format string, read func(r io.Reader, name string) (Tensor, error)) (Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return Tensor{}, fmt.Errorf("data: %s: %w", format, err)
	}
	defer f.Close()
	return read(f, path)
}

// failAt is what a binary reader returns for malformed input: a
// *FormatError at byte offset off, wanting want and getting got, wrapping
// the read error err (nil if none).
type failAt func(off int64, want, got string, err error) (Tensor, error)

// formatErrorAt returns the failAt of a reader of format reading the file
// name ("" for an io.Reader).
func formatErrorAt(format, name string) failAt {
	return func(off int64, want, got string, err error) (Tensor, error) {
		return Tensor{}, &FormatError{Format: format, File: name, Offset: off, Want: want, Got: got, Err: err}
	}
}

// countingReader counts the bytes read through it, for error offsets.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gotBytes describes a short read for an error message.
func gotBytes(n int, err error) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		if n == 0 {
			return "end of input"
		}
		return plural(n, "byte") + " before end of input"
	}
	return plural(n, "byte")
}

// readErr keeps a read error worth reporting, dropping the EOFs that
// gotBytes already describes.
func readErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil
	}
	return err
}

// maxInitialValues caps how many values a reader allocates up front from a
// header's claimed size, so a corrupt header cannot demand gigabytes before
// the data proves to be there; beyond it the slice grows as data arrives.
const maxInitialValues = 1 << 20

// decoder converts len(dst) values of one element type from src, which
// holds exactly their bytes. It works a chunk at a time so the per-value
// loop has no call in it.
type decoder func(dst []float64, src []byte)

// sizeOf returns how many bytes r has left when that is known without
// reading (a file, a bytes.Reader), and -1 otherwise.
func sizeOf(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case *os.File:
		fi, err := r.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		pos, err := r.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return fi.Size() - pos
	}
	return -1
}

// readValues decodes n values of size bytes each from r with decode. When
// avail ≥ 0 is the number of bytes r has left, it allocates the result
// once; otherwise it grows the result only as bytes arrive. It returns the
// values read and, on a short read, how many bytes it got and the read
// error.
func readValues(r io.Reader, n int64, size int, decode decoder, avail int64) ([]float64, int64, error) {
	initial := min(n, maxInitialValues)
	if avail >= 0 {
		initial = max(0, min(n, avail/int64(size)))
	}
	out := make([]float64, 0, initial)
	buf := make([]byte, 64<<10-(64<<10)%size)
	for left := n * int64(size); left > 0; {
		chunk := buf[:min(int64(len(buf)), left)]
		k, err := io.ReadFull(r, chunk)
		if need := len(out) + k/size; need > cap(out) {
			// Double, capped at n: append's gentler growth for large
			// slices would copy a big array many times over.
			grown := make([]float64, len(out), max(int64(need), min(2*int64(cap(out)), n)))
			copy(grown, out)
			out = grown
		}
		m := k / size
		decode(out[len(out):len(out)+m], chunk[:m*size])
		out = out[:len(out)+m]
		left -= int64(k)
		if err != nil {
			return out, n*int64(size) - left, err
		}
	}
	return out, n * int64(size), nil
}

// readArray reads the values of a tensor of shape that follow its header
// in cr: n of size bytes each, decoded with decode, and then the end of the
// input. avail is sizeOf the whole input (-1: unknown); data names the
// values in an error ("24 bytes of data for shape [2 3]").
func readArray(cr *countingReader, avail int64, shape []int, n int64, size int, decode decoder, data string, bad failAt) (Tensor, error) {
	start := cr.n
	if avail >= 0 {
		avail -= start
	}
	values, got, err := readValues(cr, n, size, decode, avail)
	if err != nil {
		return bad(start, data, gotBytes(int(got), err), readErr(err))
	}
	end := cr.n
	if ok, err := checkEnd(cr); err != nil {
		return bad(end, "end of input after the array", "a read error", err)
	} else if !ok {
		return bad(end, "end of input after the array", "more bytes", nil)
	}
	return Tensor{Shape: shape, Data: values}, nil
}

// checkEnd reports whether r has no bytes left.
func checkEnd(r io.Reader) (bool, error) {
	var one [1]byte
	k, err := io.ReadFull(r, one[:])
	if k == 0 && err == io.EOF {
		return true, nil
	}
	return false, readErr(err)
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
