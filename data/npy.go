package data

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// npyMagic opens every NPY file.
const npyMagic = "\x93NUMPY"

// maxNPYHeader bounds the header a reader accepts. NumPy's own limit is
// 10000 bytes for files it reads without allow_pickle-style overrides; a
// larger one here means a corrupt length field.
const maxNPYHeader = 1 << 16

type npyType struct {
	size   int
	decode decoder
}

// each builds a decoder from a per-value conversion of size bytes. The
// call inlines, so the loop stays tight.
func each(size int, conv func([]byte) float64) decoder {
	return func(dst []float64, src []byte) {
		for i := range dst {
			dst[i] = conv(src[i*size : i*size+size])
		}
	}
}

// npyTypes maps a descr without its byte-order character to its decoder.
// All are little-endian.
var npyTypes = map[string]npyType{
	"f8": {8, each(8, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })},
	"f4": {4, each(4, func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) })},
	"i8": {8, each(8, func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) })},
	"i4": {4, each(4, func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) })},
	"i2": {2, each(2, func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) })},
	"i1": {1, each(1, func(b []byte) float64 { return float64(int8(b[0])) })},
	"u8": {8, each(8, func(b []byte) float64 { return float64(binary.LittleEndian.Uint64(b)) })},
	"u4": {4, each(4, func(b []byte) float64 { return float64(binary.LittleEndian.Uint32(b)) })},
	"u2": {2, each(2, func(b []byte) float64 { return float64(binary.LittleEndian.Uint16(b)) })},
	"u1": {1, each(1, func(b []byte) float64 { return float64(b[0]) })},
	"b1": {1, each(1, func(b []byte) float64 {
		if b[0] != 0 {
			return 1
		}
		return 0
	})},
}

// ReadNPY reads one array in NumPy's NPY format, versions 1.0, 2.0 and 3.0,
// in C order with a little-endian element type: f4, f8, i1, i2, i4, i8, u1,
// u2, u4, u8 or b1. Values are converted to float64 (int64 values beyond
// 2⁵³ lose precision).
//
// Malformed or unsupported input gives a *FormatError; the reader must hold
// exactly one array.
func ReadNPY(r io.Reader) (Tensor, error) { return readNPY(r, "") }

// LoadNPY reads the NPY file at path; see ReadNPY.
func LoadNPY(path string) (Tensor, error) { return loadFile(path, "npy", readNPY) }

func readNPY(r io.Reader, name string) (Tensor, error) {
	bad := formatErrorAt("npy", name)
	avail := sizeOf(r)
	cr := &countingReader{r: bufio.NewReader(r)}
	var pre [8]byte
	if k, err := io.ReadFull(cr, pre[:]); err != nil {
		return bad(0, "the 8-byte NPY preamble", gotBytes(k, err), readErr(err))
	}
	if string(pre[:6]) != npyMagic {
		return bad(0, fmt.Sprintf("magic %q", npyMagic), fmt.Sprintf("%q", pre[:6]), nil)
	}
	var hlen int
	switch pre[6] {
	case 1:
		var b [2]byte
		if k, err := io.ReadFull(cr, b[:]); err != nil {
			return bad(8, "a 2-byte header length", gotBytes(k, err), readErr(err))
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if k, err := io.ReadFull(cr, b[:]); err != nil {
			return bad(8, "a 4-byte header length", gotBytes(k, err), readErr(err))
		}
		l := binary.LittleEndian.Uint32(b[:])
		if l > maxNPYHeader {
			return bad(8, fmt.Sprintf("a header length ≤ %d", maxNPYHeader), strconv.FormatUint(uint64(l), 10), nil)
		}
		hlen = int(l)
	default:
		return bad(6, "format version 1, 2 or 3", fmt.Sprintf("%d.%d", pre[6], pre[7]), nil)
	}
	hstart := cr.n
	header := make([]byte, hlen)
	if k, err := io.ReadFull(cr, header); err != nil {
		return bad(hstart, fmt.Sprintf("a %d-byte header", hlen), gotBytes(k, err), readErr(err))
	}
	h, err := parseNPYHeader(string(header))
	if err != nil {
		err.Format, err.File, err.Offset = "npy", name, hstart+err.Offset
		return Tensor{}, err
	}
	n := int64(1)
	for _, d := range h.shape {
		if d > math.MaxInt32 || (d != 0 && n > math.MaxInt64/8/int64(d)) {
			return bad(hstart, "a shape that fits in memory", fmt.Sprint(h.shape), nil)
		}
		n *= int64(d)
	}
	return readArray(cr, avail, h.shape, n, h.typ.size, h.typ.decode,
		fmt.Sprintf("%d bytes of %s data for shape %v", n*int64(h.typ.size), h.descr, h.shape), bad)
}

type npyHeader struct {
	descr string
	typ   npyType
	shape []int
}

// parseNPYHeader reads the Python dict literal NumPy writes, such as
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }. Offsets in
// the returned error are relative to the header's start.
func parseNPYHeader(s string) (npyHeader, *FormatError) {
	p := &pyLexer{s: s}
	var h npyHeader
	var seen = map[string]bool{}
	fail := func(want, got string) (npyHeader, *FormatError) {
		return npyHeader{}, &FormatError{Offset: int64(p.tokPos), Want: want, Got: got}
	}
	if tok := p.next(); tok != "{" {
		return fail("'{' opening the header dict", quoteTok(tok))
	}
	for {
		tok := p.next()
		if tok == "}" {
			break
		}
		key, ok := p.str(tok)
		if !ok {
			return fail("a quoted key or '}'", quoteTok(tok))
		}
		if key != "descr" && key != "fortran_order" && key != "shape" {
			return fail("key 'descr', 'fortran_order' or 'shape'", strconv.Quote(key))
		}
		if tok := p.next(); tok != ":" {
			return fail("':' after key "+strconv.Quote(key), quoteTok(tok))
		}
		switch key {
		case "descr":
			tok := p.next()
			d, ok := p.str(tok)
			if !ok {
				return fail("a quoted descr such as '<f8'", quoteTok(tok))
			}
			if len(d) < 2 || (d[0] != '<' && d[0] != '|') {
				return fail("a little-endian descr ('<' or '|' byte order)", strconv.Quote(d))
			}
			t, ok := npyTypes[d[1:]]
			if !ok {
				return fail("descr f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 or b1", strconv.Quote(d))
			}
			h.descr, h.typ = d, t
		case "fortran_order":
			tok := p.next()
			switch tok {
			case "False":
			case "True":
				return fail("fortran_order False (C order)", "True")
			default:
				return fail("True or False", quoteTok(tok))
			}
		case "shape":
			if tok := p.next(); tok != "(" {
				return fail("'(' opening the shape tuple", quoteTok(tok))
			}
			h.shape = []int{}
			for {
				tok := p.next()
				if tok == ")" {
					break
				}
				v, err := strconv.ParseUint(strings.TrimSuffix(tok, "L"), 10, 31)
				if err != nil {
					return fail("a dimension (integer below 2³¹) or ')'", quoteTok(tok))
				}
				h.shape = append(h.shape, int(v))
				if tok := p.next(); tok == ")" {
					break
				} else if tok != "," {
					return fail("',' or ')' in the shape tuple", quoteTok(tok))
				}
			}
		}
		seen[key] = true
		if tok := p.next(); tok == "}" {
			break
		} else if tok != "," {
			return fail("',' or '}' after a value", quoteTok(tok))
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return fail("key '"+k+"' in the header", "none")
		}
	}
	if rest := strings.TrimSpace(s[p.pos:]); rest != "" {
		p.tokPos = p.pos
		return fail("only spaces and a newline after the header dict", strconv.Quote(rest))
	}
	return h, nil
}

// pyLexer splits the header into Python tokens: punctuation, quoted
// strings (kept with their quotes), and bare words (numbers, True, False).
type pyLexer struct {
	s      string
	pos    int
	tokPos int // where the last token started
}

// next returns the following token, or "" at the end.
func (p *pyLexer) next() string {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
	p.tokPos = p.pos
	if p.pos >= len(p.s) {
		return ""
	}
	c := p.s[p.pos]
	switch {
	case strings.IndexByte("{}():,", c) >= 0:
		p.pos++
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.s[p.pos+1:], c)
		if end < 0 {
			p.pos = len(p.s)
		} else {
			p.pos += end + 2
		}
	default:
		for p.pos < len(p.s) && strings.IndexByte(" \t\r\n{}():,'\"", p.s[p.pos]) < 0 {
			p.pos++
		}
	}
	return p.s[p.tokPos:p.pos]
}

// str unquotes a string token.
func (p *pyLexer) str(tok string) (string, bool) {
	if len(tok) < 2 || (tok[0] != '\'' && tok[0] != '"') || tok[len(tok)-1] != tok[0] {
		return "", false
	}
	return tok[1 : len(tok)-1], true
}

func quoteTok(tok string) string {
	if tok == "" {
		return "end of header"
	}
	return strconv.Quote(tok)
}

// WriteNPY writes t in NPY format 1.0 as little-endian float64 ('<f8') in C
// order, readable by numpy.load and ReadNPY.
func WriteNPY(w io.Writer, t Tensor) error {
	if len(t.Data) != t.Len() {
		return fmt.Errorf("data: npy: shape %v wants %d values, got %d", t.Shape, t.Len(), len(t.Data))
	}
	var shape strings.Builder
	for i, d := range t.Shape {
		if i > 0 {
			shape.WriteString(", ")
		}
		shape.WriteString(strconv.Itoa(d))
	}
	if len(t.Shape) == 1 {
		shape.WriteString(",") // Python's one-element tuple
	}
	dict := fmt.Sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }", shape.String())
	// NumPy pads the header with spaces so the data starts at a multiple
	// of 64 bytes, then ends it with a newline.
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	header := dict + strings.Repeat(" ", pad) + "\n"
	if len(header) > math.MaxUint16 {
		return fmt.Errorf("data: npy: header of %d bytes too long for format 1.0", len(header))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(npyMagic)
	bw.Write([]byte{1, 0})
	binary.Write(bw, binary.LittleEndian, uint16(len(header)))
	bw.WriteString(header)
	var b [8]byte
	for _, v := range t.Data {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("data: npy: %w", err)
	}
	return nil
}
