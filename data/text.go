package data

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ReadText reads all of r as UTF-8 text, for a character vocabulary. It
// returns a *FormatError (format "text") at the offset of the first byte
// that is not UTF-8, and the read error, wrapped, if reading fails.
func ReadText(r io.Reader) (string, error) { return readText(r, "") }

// LoadText reads the file at path as ReadText does; its errors name the
// file.
func LoadText(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readText(f, path)
}

func readText(r io.Reader, file string) (string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", &FormatError{Format: "text", File: file, Offset: int64(len(b)), Want: "more text", Got: "a read error", Err: err}
	}
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			c, size := utf8.DecodeRune(b[off:])
			if c == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return "", &FormatError{Format: "text", File: file, Offset: int64(off), Want: "UTF-8", Got: fmt.Sprintf("byte %#02x", b[off])}
	}
	return string(b), nil
}

// CharVocab is the vocabulary of a character-level language model: the
// distinct characters (runes) of a text, numbered 0, 1, ... in code point
// order, so that one text always gives one numbering. Create it with
// NewCharVocab. It is immutable and safe for concurrent use.
type CharVocab struct {
	chars []rune       // by id, ascending
	ids   map[rune]int // inverse of chars
}

// NewCharVocab returns the vocabulary of text's characters. Bytes of text
// that are not UTF-8 count as U+FFFD (range over a string's rule); LoadText
// refuses them instead.
func NewCharVocab(text string) *CharVocab {
	ids := make(map[rune]int)
	for _, c := range text {
		ids[c] = 0
	}
	chars := make([]rune, 0, len(ids))
	for c := range ids {
		chars = append(chars, c)
	}
	slices.Sort(chars)
	for i, c := range chars {
		ids[c] = i
	}
	return &CharVocab{chars: chars, ids: ids}
}

// Size returns the number of characters, the width of a model's output.
func (v *CharVocab) Size() int { return len(v.chars) }

// String describes the vocabulary for a notebook, with its first
// characters: CharVocab{65 characters: "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabc..."}.
func (v *CharVocab) String() string {
	const shown = 48
	s := string(v.chars[:min(len(v.chars), shown)])
	more := ""
	if len(v.chars) > shown {
		more = "..."
	}
	return fmt.Sprintf("CharVocab{%d characters: %s%s}", len(v.chars), strconv.Quote(s), more)
}

// Encode returns the id of each character of s. A character the vocabulary
// lacks is an error wrapping ErrArgument that quotes it and gives its
// position in s, counted in characters from 0.
func (v *CharVocab) Encode(s string) ([]int, error) {
	out := make([]int, 0, len(s))
	for _, c := range s {
		id, ok := v.ids[c]
		if !ok {
			return nil, fmt.Errorf("%w: CharVocab.Encode: character %q at position %d is not in the vocabulary of %d characters", ErrArgument, c, len(out), len(v.chars))
		}
		out = append(out, id)
	}
	return out, nil
}

// Decode returns the text of ids. It panics with an error wrapping
// ErrArgument if an id is outside [0, Size()).
func (v *CharVocab) Decode(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		b.WriteRune(v.char("Decode", i, id))
	}
	return b.String()
}

// EncodeTensor is Encode with the ids in a Tensor of shape [characters],
// as a model takes them.
func (v *CharVocab) EncodeTensor(s string) (Tensor, error) {
	ids, err := v.Encode(s)
	if err != nil {
		return Tensor{}, err
	}
	return NewTensor([]int{len(ids)}, intsToFloats(ids)), nil
}

// DecodeTensor is Decode for ids held in a Tensor of any shape, read in
// order (a model's sampled ids). It panics with an error wrapping
// ErrArgument if a value is not an integer in [0, Size()).
func (v *CharVocab) DecodeTensor(t Tensor) string {
	var b strings.Builder
	for i, x := range t.Data {
		id := int(x)
		if float64(id) != x {
			panic(fmt.Errorf("%w: CharVocab.DecodeTensor: value %v at position %d is not an id", ErrArgument, x, i))
		}
		b.WriteRune(v.char("DecodeTensor", i, id))
	}
	return b.String()
}

func (v *CharVocab) char(method string, pos, id int) rune {
	if id < 0 || id >= len(v.chars) {
		panic(fmt.Errorf("%w: CharVocab.%s: id %d at position %d is outside [0, %d)", ErrArgument, method, id, pos, len(v.chars)))
	}
	return v.chars[id]
}

func intsToFloats(ids []int) []float64 {
	out := make([]float64, len(ids))
	for i, id := range ids {
		out[i] = float64(id)
	}
	return out
}

// TrainValSplit cuts s into its first ⌊fraction·len(s)⌋ elements, for
// training, and the rest, for validation: TrainValSplit(ids, 0.9) keeps the
// last tenth of a text for validation, as nanoGPT does. A text is cut, not
// shuffled, so that no validation window overlaps a training one except at
// the cut. Both are views of s. It panics with an error wrapping
// ErrArgument unless 0 ≤ fraction ≤ 1.
func TrainValSplit[T any](s []T, fraction float64) (train, val []T) {
	if !(fraction >= 0 && fraction <= 1) {
		panic(fmt.Errorf("%w: TrainValSplit: want a fraction in [0, 1], got %v", ErrArgument, fraction))
	}
	n := int(math.Floor(fraction * float64(len(s))))
	return s[:n:n], s[n:]
}

// TextWindows returns a dataset of n windows of window consecutive ids of
// text (endless if n < 0), each element a pair (input, target) of shape
// [window]: target is input shifted by one, the id that follows each
// position, as a language model learns. Window i starts at a position drawn
// from [0, len(text)-window) by a PCG generator seeded with (seed, i), so
// every pass, and every pipeline built the same way, reads the same windows
// (IterAt resumes among them), and windows overlap freely, as nanoGPT's
// random batches do. The elements are views of a copy of text, made once.
//
// It returns an error wrapping ErrArgument that gives both lengths if text
// has no more ids than the window (its last target would lie past the
// end), and panics with an error wrapping ErrArgument if window < 1.
func TextWindows(text []int, window, n int, seed uint64) (*Dataset, error) {
	if window < 1 {
		panic(fmt.Errorf("%w: TextWindows: want a window ≥ 1, got %d", ErrArgument, window))
	}
	if len(text) <= window {
		return nil, fmt.Errorf("%w: TextWindows: a window of %d needs a text of at least %d ids (the targets run one further), got %d",
			ErrArgument, window, window+1, len(text))
	}
	ids := intsToFloats(text)
	span := len(ids) - window
	return FromFunc(n, func(i int) []Tensor {
		start := rand.New(rand.NewPCG(seed, uint64(i))).IntN(span)
		return []Tensor{
			NewTensor([]int{window}, ids[start:start+window:start+window]),
			NewTensor([]int{window}, ids[start+1:start+1+window:start+1+window]),
		}
	}), nil
}
