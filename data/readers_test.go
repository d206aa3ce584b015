package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idxBytes encodes an IDX array by the format's description, independently
// of the reader: magic 0x0000, type, rank, big-endian dims, big-endian data.
func idxBytes(typ byte, shape []int, vals []float64) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, typ, byte(len(shape))})
	for _, d := range shape {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	for _, v := range vals {
		switch typ {
		case 0x08:
			b.WriteByte(byte(v))
		case 0x09:
			b.WriteByte(byte(int8(v)))
		case 0x0B:
			binary.Write(&b, binary.BigEndian, int16(v))
		case 0x0C:
			binary.Write(&b, binary.BigEndian, int32(v))
		case 0x0D:
			binary.Write(&b, binary.BigEndian, float32(v))
		case 0x0E:
			binary.Write(&b, binary.BigEndian, v)
		}
	}
	return b.Bytes()
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

func TestReadIDX(t *testing.T) {
	images := []float64{0, 255, 128, 7, 1, 2, 3, 4, 5, 6, 7, 8}
	for _, tc := range []struct {
		name  string
		typ   byte
		shape []int
		vals  []float64
	}{
		{"ubyte images", 0x08, []int{3, 2, 2}, images},
		{"ubyte labels", 0x08, []int{4}, floats(5, 0, 4, 1)},
		{"sbyte", 0x09, []int{3}, floats(-128, 0, 127)},
		{"short", 0x0B, []int{2}, floats(-300, 300)},
		{"int", 0x0C, []int{2, 2}, floats(-70000, 1, 2, 70000)},
		{"float", 0x0D, []int{3}, []float64{0.5, -1.25, 3}},
		{"double", 0x0E, []int{2}, []float64{math.Pi, -1e-300}},
		{"scalar", 0x0E, nil, []float64{42}},
		{"empty", 0x08, []int{0, 28, 28}, nil},
	} {
		raw := idxBytes(tc.typ, tc.shape, tc.vals)
		for _, enc := range []struct {
			name string
			b    []byte
		}{{"raw", raw}, {"gzip", gzipped(raw)}} {
			t.Run(tc.name+"/"+enc.name, func(t *testing.T) {
				got, err := ReadIDX(bytes.NewReader(enc.b))
				if err != nil {
					t.Fatalf("ReadIDX: %v", err)
				}
				if !slices.Equal(got.Shape, tc.shape) && !(len(got.Shape) == 0 && len(tc.shape) == 0) {
					t.Fatalf("shape %v, want %v", got.Shape, tc.shape)
				}
				if len(got.Data) != len(tc.vals) || (len(tc.vals) > 0 && !slices.Equal(got.Data, tc.vals)) {
					t.Fatalf("values %v, want %v", got.Data, tc.vals)
				}
			})
		}
	}

	path := filepath.Join(t.TempDir(), "t10k-labels-idx1-ubyte.gz")
	if err := os.WriteFile(path, gzipped(idxBytes(0x08, []int{3}, floats(7, 2, 1))), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadIDX(path); err != nil || !slices.Equal(got.Data, floats(7, 2, 1)) {
		t.Fatalf("LoadIDX = %v, %v", got, err)
	}
	if _, err := LoadIDX(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.HasPrefix(err.Error(), "data: idx: ") {
		t.Fatalf("LoadIDX of a missing file: %v", err)
	}
}

func TestReadIDXErrors(t *testing.T) {
	good := idxBytes(0x08, []int{2, 3}, rangeFloats(0, 6))
	corrupt := gzipped(good)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32 in gzip's trailer
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "data: idx: offset 0: want a 4-byte magic number, got end of input"},
		{"short magic", []byte{0, 0}, "offset 0: want a 4-byte magic number, got 2 bytes before end of input"},
		{"bad magic", []byte{1, 2, 8, 1}, "offset 0: want magic number starting 0x0000, got 0x0102"},
		{"bad type", []byte{0, 0, 0x0A, 1}, "offset 2: want element type 0x08, 0x09, 0x0b, 0x0c, 0x0d or 0x0e, got 0x0a"},
		{"short dims", []byte{0, 0, 8, 2, 0, 0, 0, 2, 0, 0}, "offset 8: want dimension 2 of 2, got 2 bytes before end of input"},
		{"short data", good[:len(good)-2], "offset 12: want 6 bytes of data for shape [2 3], got 4 bytes before end of input"},
		{"trailing", append(append([]byte{}, good...), 9), "offset 18: want end of input after the array, got more bytes"},
		{"huge dims", []byte{0, 0, 0x0E, 3, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff}, "offset 4: want a size that fits in memory"},
		{"bad gzip", []byte{0x1f, 0x8b, 0, 0}, "offset 0: want a gzip header"},
		{"gzip checksum", corrupt, "want end of input after the array, got a read error: gzip: invalid checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadIDX(bytes.NewReader(tc.in))
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) {
				t.Fatalf("ReadIDX(% x) = %v, want a *FormatError", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadIDX(% x):\ngot  %v\nwant it to contain %q", tc.in, err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "bad.idx")
	os.WriteFile(path, []byte{1, 2, 3, 4}, 0o644)
	if _, err := LoadIDX(path); err == nil || !strings.HasPrefix(err.Error(), "data: idx: "+path+": offset 0: ") {
		t.Fatalf("LoadIDX error does not name the file: %v", err)
	}
}

func TestReadNPYNumPyFixtures(t *testing.T) {
	arange := rangeFloats(0, 6)
	for _, tc := range []struct {
		file  string
		shape []int
		vals  []float64
	}{
		{"arange23_f8.npy", []int{2, 3}, arange},
		{"arange23_f4.npy", []int{2, 3}, arange},
		{"arange23_i4.npy", []int{2, 3}, arange},
		{"arange23_i8.npy", []int{2, 3}, arange},
		{"arange23_i2.npy", []int{2, 3}, arange},
		{"arange23_u1.npy", []int{2, 3}, arange},
		{"arange23_b1.npy", []int{2, 3}, floats(0, 1, 0, 1, 0, 1)},
		{"scalar_f8.npy", []int{}, []float64{2.5}},
		{"vector_f8.npy", []int{3}, []float64{1.5, -2, 3.25}},
		{"empty_f8.npy", []int{0, 4}, nil},
		{"v2_f4.npy", []int{2, 2}, []float64{0.5, 1.5, 2.5, 3.5}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := LoadNPY(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatalf("LoadNPY: %v", err)
			}
			if !slices.Equal(got.Shape, tc.shape) || len(got.Data) != len(tc.vals) || (len(tc.vals) > 0 && !slices.Equal(got.Data, tc.vals)) {
				t.Fatalf("got %v %v, want %v %v", got.Shape, got.Data, tc.shape, tc.vals)
			}
		})
	}
	for _, tc := range []struct{ file, want string }{
		{"bigendian_f8.npy", "want a little-endian descr ('<' or '|' byte order), got \">f8\""},
		{"fortran_f8.npy", "want fortran_order False (C order), got True"},
	} {
		_, err := LoadNPY(filepath.Join("testdata", tc.file))
		if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("LoadNPY(%s) = %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

// npyBytes builds an NPY 1.0 file around a header dict, by the format's
// description.
func npyBytes(dict string, data []byte) []byte {
	h := dict + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(h)))
	b.WriteString(h)
	b.Write(data)
	return b.Bytes()
}

func TestReadNPYErrors(t *testing.T) {
	f8 := make([]byte, 16)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "offset 0: want the 8-byte NPY preamble, got end of input"},
		{"bad magic", []byte("\x93NUMPX\x01\x00"), `offset 0: want magic "\x93NUMPY", got "\x93NUMPX"`},
		{"bad version", []byte("\x93NUMPY\x04\x00"), "offset 6: want format version 1, 2 or 3, got 4.0"},
		{"short header", []byte("\x93NUMPY\x01\x00\x20\x00{'de"), "offset 10: want a 32-byte header, got 4 bytes before end of input"},
		{"huge v2 header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f"), "offset 8: want a header length ≤ 65536, got 2147483647"},
		{"not a dict", npyBytes("[1]", nil), `offset 10: want '{' opening the header dict, got "[1]"`},
		{"unknown key", npyBytes("{'descr': '<f8', 'foo': 1}", nil), `offset 27: want key 'descr', 'fortran_order' or 'shape', got "foo"`},
		{"missing shape", npyBytes("{'descr': '<f8', 'fortran_order': False}", nil), "want key 'shape' in the header, got none"},
		{"bad descr", npyBytes("{'descr': '<c16', 'fortran_order': False, 'shape': (2,)}", nil), `want descr f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 or b1, got "<c16"`},
		{"bad dim", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, x)}", nil), `want a dimension (integer below 2³¹) or ')', got "x"`},
		{"short data", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8), "want 24 bytes of <f8 data for shape [3], got 16 bytes before end of input"},
		{"trailing", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", f8), "want end of input after the array, got more bytes"},
		{"junk after dict", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (), } x", nil), `want only spaces and a newline after the header dict, got "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadNPY(bytes.NewReader(tc.in))
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrFormat) {
				t.Fatalf("ReadNPY(%q) = %v, want a *FormatError", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadNPY(%q):\ngot  %v\nwant it to contain %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestNPYRoundTrip(t *testing.T) {
	for _, x := range []Tensor{
		NewTensor(nil, []float64{math.E}),
		NewTensor([]int{4}, []float64{1, math.Inf(-1), -0.0, 1e-310}),
		RandomNormal(1, 3, 4, 5),
		Zeros(0, 3),
	} {
		var b bytes.Buffer
		if err := WriteNPY(&b, x); err != nil {
			t.Fatal(err)
		}
		if (b.Len()-len(x.Data)*8)%64 != 0 {
			t.Errorf("shape %v: header not padded to 64 bytes (file %d bytes)", x.Shape, b.Len())
		}
		y, err := ReadNPY(&b)
		if err != nil {
			t.Fatalf("shape %v: %v", x.Shape, err)
		}
		if !slices.Equal(x.Shape, y.Shape) || !slices.Equal(x.Data, y.Data) {
			t.Fatalf("round trip of %v gave %v", x, y)
		}
	}
}

// TestWriteNPYNumPy checks WriteNPY against numpy.load, where Debian's
// Python with NumPy is installed.
func TestWriteNPYNumPy(t *testing.T) {
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skip("no NumPy in " + py)
	}
	path := filepath.Join(t.TempDir(), "x.npy")
	f, _ := os.Create(path)
	WriteNPY(f, NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6.5}))
	f.Close()
	out, err := exec.Command(py, "-c", "import numpy,sys; a=numpy.load(sys.argv[1]); print(a.shape, a.dtype, a.sum())", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "(2, 3) float64 21.5" {
		t.Fatalf("numpy.load: %s %v", out, err)
	}
}

func TestReadCSV(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		opts  CSVOptions
		shape []int
		vals  []float64
	}{
		{"plain", "1,2\n3,4\n", CSVOptions{}, []int{2, 2}, floats(1, 2, 3, 4)},
		{"header", "x,y\n1,2\n", CSVOptions{Header: true}, []int{1, 2}, floats(1, 2)},
		{"columns", "a,b,c\n1,2,3\n4,5,6\n", CSVOptions{Header: true, Columns: []int{2, 0}}, []int{2, 2}, floats(3, 1, 6, 4)},
		{"semicolons and spaces", "1.5; -2\n 3e2;4\n", CSVOptions{Comma: ';'}, []int{2, 2}, []float64{1.5, -2, 300, 4}},
		{"comments", "# data\n1\n2\n", CSVOptions{Comment: '#'}, []int{2, 1}, floats(1, 2)},
		{"header only", "x,y\n", CSVOptions{Header: true}, []int{0, 2}, nil},
		{"empty", "", CSVOptions{}, []int{0, 0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCSV(strings.NewReader(tc.in), tc.opts)
			if err != nil {
				t.Fatalf("ReadCSV(%q): %v", tc.in, err)
			}
			if !slices.Equal(got.Shape, tc.shape) || !slices.Equal(got.Data, tc.vals) {
				t.Fatalf("ReadCSV(%q) = %v %v, want %v %v", tc.in, got.Shape, got.Data, tc.shape, tc.vals)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   string
		opts CSVOptions
		want string
	}{
		{"not a number", "1,2\n3,abc\n", CSVOptions{}, `data: csv: line 2, column 3: want a number, got "abc"`},
		{"ragged", "1,2\n3\n", CSVOptions{}, "line 2, column 1: want 2 fields like the first record"},
		{"missing column", "1,2\n", CSVOptions{Columns: []int{5}}, "line 1, column 1: want column 5 to exist, got 2 columns"},
		{"bad quote", "1,\"2\n", CSVOptions{}, "want well-formed CSV"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadCSV(strings.NewReader(tc.in), tc.opts)
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadCSV(%q) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestCSVRoundTrip(t *testing.T) {
	x := RandomNormal(2, 5, 3)
	x.Data[0] = math.NaN()
	path := filepath.Join(t.TempDir(), "x.csv")
	f, _ := os.Create(path)
	if err := WriteCSV(f, x, []string{"a", "b", "c"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	y, err := LoadCSV(path, CSVOptions{Header: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Shape, y.Shape) || !math.IsNaN(y.Data[0]) || !slices.Equal(x.Data[1:], y.Data[1:]) {
		t.Fatalf("round trip of\n%v\ngave\n%v", x, y)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, Zeros(2, 2, 2), nil); err == nil {
		t.Fatal("WriteCSV of rank 3 succeeded")
	}
	if err := WriteCSV(&b, NewTensor([]int{3}, floats(1, 2, 3)), nil); err != nil || b.String() != "1\n2\n3\n" {
		t.Fatalf("WriteCSV of a vector = %q, %v", b.String(), err)
	}
}
