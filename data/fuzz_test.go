package data

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"
)

// The fuzz targets check that malformed input gives an error, never a panic
// or a runaway allocation, and that what parses is self-consistent.

// checkRead fails t unless a reader returned a tensor whose values fill its
// shape or a *FormatError, and reports whether it returned a tensor.
func checkRead(t *testing.T, x Tensor, err error) bool {
	t.Helper()
	if err != nil {
		if _, ok := err.(*FormatError); !ok {
			t.Fatalf("error %v is not a *FormatError", err)
		}
		return false
	}
	if len(x.Data) != x.Len() {
		t.Fatalf("shape %v with %d values", x.Shape, len(x.Data))
	}
	return true
}

func FuzzReadIDX(f *testing.F) {
	raw := idxBytes(0x08, []int{2, 3}, rangeFloats(0, 6))
	f.Add(raw)
	f.Add(gzipped(raw))
	f.Add(idxBytes(0x0E, []int{2}, []float64{1, 2}))
	f.Add(idxBytes(0x0B, nil, floats(3)))
	f.Add([]byte{0, 0, 0x0D, 1, 0, 0, 0, 1, 0x3f, 0x80, 0, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := ReadIDX(bytes.NewReader(in))
		if !checkRead(t, x, err) {
			return
		}
	})
}

func FuzzReadNPY(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.npy"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	var b bytes.Buffer
	WriteNPY(&b, RandomNormal(1, 2, 2))
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := ReadNPY(bytes.NewReader(in))
		if !checkRead(t, x, err) {
			return
		}
		// What parses writes back and reads again to the same values.
		var out bytes.Buffer
		if err := WriteNPY(&out, x); err != nil {
			t.Fatal(err)
		}
		y, err := ReadNPY(&out)
		if err != nil || !slices.Equal(x.Shape, y.Shape) || len(x.Data) != len(y.Data) {
			t.Fatalf("rewrite of %v failed: %v", x.Shape, err)
		}
	})
}

func FuzzReadText(f *testing.F) {
	f.Add([]byte("To be, or not to be\n"))
	f.Add([]byte("héllo → wörld"))
	f.Add([]byte{'a', 0xff, 'b'})
	f.Add([]byte{0xe2, 0x82})
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := ReadText(bytes.NewReader(in))
		if err != nil {
			fe, ok := err.(*FormatError)
			if !ok || fe.Offset < 0 || fe.Offset >= int64(len(in)) || !utf8.Valid(in[:fe.Offset]) {
				t.Fatalf("error %v: want a *FormatError at the first byte that is not UTF-8", err)
			}
			return
		}
		if s != string(in) || !utf8.ValidString(s) {
			t.Fatalf("ReadText(%q) = %q", in, s)
		}
		v := NewCharVocab(s)
		ids, err := v.Encode(s)
		if err != nil || v.Decode(ids) != s {
			t.Fatalf("%q: Encode gives %v, %v; Decode gives back %q", s, ids, err, v.Decode(ids))
		}
	})
}
