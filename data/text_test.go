package data_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/strategy"
)

func TestCharVocab(t *testing.T) {
	for _, c := range []struct {
		name, text, chars string
		encode            string
		ids               []int
		err               string
	}{
		{"ascii", "hello world", " dehlorw", "hold", []int{3, 5, 4, 1}, ""},
		{"unicode", "héllo → wörld", " dhlorwéö→", "→é", []int{9, 7}, ""},
		{"unknown", "hello", "ehlo", "hole!", nil,
			`data: invalid argument: CharVocab.Encode: character '!' at position 4 is not in the vocabulary of 4 characters`},
		{"unknown after wide", "héllo", "hloé", "éhx", nil,
			`data: invalid argument: CharVocab.Encode: character 'x' at position 2 is not in the vocabulary of 4 characters`},
		{"newline", "a\nb", "\nab", "b\na\t", nil,
			`data: invalid argument: CharVocab.Encode: character '\t' at position 3 is not in the vocabulary of 3 characters`},
		{"empty", "", "", "", []int{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := data.NewCharVocab(c.text)
			if v.Size() != len([]rune(c.chars)) || v.Decode(seqInts(v.Size())) != c.chars {
				t.Errorf("vocabulary %q (size %d), want %q", v.Decode(seqInts(v.Size())), v.Size(), c.chars)
			}
			ids, err := v.Encode(c.encode)
			if c.err != "" {
				if err == nil || err.Error() != c.err || !errors.Is(err, data.ErrArgument) {
					t.Errorf("Encode(%q) error %v, want %q", c.encode, err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(ids, c.ids) {
				t.Fatalf("Encode(%q) = %v, %v; want %v", c.encode, ids, err, c.ids)
			}
			if got := v.Decode(ids); got != c.encode {
				t.Errorf("Decode(%v) = %q, want %q", ids, got, c.encode)
			}
			tt, err := v.EncodeTensor(c.encode)
			if err != nil || fmt.Sprint(tt.Shape) != fmt.Sprint([]int{len(c.ids)}) || v.DecodeTensor(tt) != c.encode {
				t.Errorf("EncodeTensor(%q) = %v %v, %v", c.encode, tt.Shape, tt.Data, err)
			}
		})
	}
	v := data.NewCharVocab("abc")
	for _, c := range []struct {
		name string
		fn   func()
		want string
	}{
		{"decode", func() { v.Decode([]int{0, 3}) }, "data: invalid argument: CharVocab.Decode: id 3 at position 1 is outside [0, 3)"},
		{"negative", func() { v.Decode([]int{-1}) }, "data: invalid argument: CharVocab.Decode: id -1 at position 0 is outside [0, 3)"},
		{"fraction", func() { v.DecodeTensor(data.NewTensor([]int{2}, []float64{1, 0.5})) },
			"data: invalid argument: CharVocab.DecodeTensor: value 0.5 at position 1 is not an id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err, _ := panics(c.fn).(error)
			if err == nil || err.Error() != c.want || !errors.Is(err, data.ErrArgument) {
				t.Errorf("panic %v, want %q", err, c.want)
			}
		})
	}
	if got := v.String(); got != `CharVocab{3 characters: "abc"}` {
		t.Errorf("String() = %s", got)
	}
}

func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func panics(fn func()) (r any) {
	defer func() { r = recover() }()
	fn()
	return nil
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.txt"), filepath.Join(dir, "bad.txt")
	os.WriteFile(good, []byte("héllo\n"), 0o600)
	os.WriteFile(bad, []byte("hé\xffllo"), 0o600)
	if s, err := data.LoadText(good); err != nil || s != "héllo\n" {
		t.Errorf("LoadText = %q, %v", s, err)
	}
	_, err := data.LoadText(bad)
	var fe *data.FormatError
	if !errors.As(err, &fe) || fe.Offset != 3 || !errors.Is(err, data.ErrFormat) ||
		err.Error() != "data: text: "+bad+": offset 3: want UTF-8, got byte 0xff" {
		t.Errorf("LoadText of a text with byte 0xff at offset 3: %v", err)
	}
	if _, err := data.LoadText(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadText of a missing file: %v", err)
	}
	if s, err := data.ReadText(strings.NewReader("abc")); err != nil || s != "abc" {
		t.Errorf("ReadText = %q, %v", s, err)
	}
}

func TestTrainValSplit(t *testing.T) {
	ids := seqInts(10)
	for _, c := range []struct {
		f          float64
		train, val int
	}{{0.9, 9, 1}, {0.95, 9, 1}, {0, 0, 10}, {1, 10, 0}, {0.5, 5, 5}} {
		train, val := data.TrainValSplit(ids, c.f)
		if len(train) != c.train || len(val) != c.val || !slices.Equal(append(slices.Clone(train), val...), ids) {
			t.Errorf("TrainValSplit(10 ids, %v) = %v, %v; want %d and %d", c.f, train, val, c.train, c.val)
		}
	}
	train, _ := data.TrainValSplit(ids, 0.5)
	if train = append(train, 99); ids[5] != 5 {
		t.Error("appending to the training part wrote into the validation part")
	}
	for _, f := range []float64{-0.1, 1.5} {
		if err, _ := panics(func() { data.TrainValSplit(ids, f) }).(error); !errors.Is(err, data.ErrArgument) {
			t.Errorf("fraction %v: panic %v, want ErrArgument", f, err)
		}
	}
}

// windows reads one pass of ds, checking every element is a window of the
// text 0, 1, 2, ... and its shifted target, and returns the starts.
func windows(t *testing.T, ds *data.Dataset, window int) []int {
	t.Helper()
	var starts []int
	it := ds.Iter()
	defer it.Close()
	for it.Next() {
		x, y := it.Value()[0], it.Value()[1]
		if fmt.Sprint(x.Shape, y.Shape) != fmt.Sprint([]int{window}, []int{window}) {
			t.Fatalf("element shapes %v %v, want [%d] [%d]", x.Shape, y.Shape, window, window)
		}
		for k := range window {
			if x.Data[k] != x.Data[0]+float64(k) || y.Data[k] != x.Data[k]+1 {
				t.Fatalf("element %v -> %v is not a window and its next ids", x.Data, y.Data)
			}
		}
		starts = append(starts, int(x.Data[0]))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return starts
}

func TestTextWindows(t *testing.T) {
	text := seqInts(20)
	ds, err := data.TextWindows(text, 4, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Cardinality() != 200 || fmt.Sprint(ds.ElementSpec()) != "[[4] [4]]" {
		t.Errorf("%v", ds)
	}
	starts := windows(t, ds, 4)
	seen := map[int]bool{}
	for _, s := range starts {
		if s < 0 || s > 15 {
			t.Fatalf("window at %d: the last target would be past the text", s)
		}
		seen[s] = true
	}
	if len(seen) != 16 {
		t.Errorf("200 windows started at %d of the 16 possible places", len(seen))
	}
	again, _ := data.TextWindows(text, 4, 200, 1)
	if !slices.Equal(windows(t, ds, 4), starts) || !slices.Equal(windows(t, again, 4), starts) {
		t.Error("another pass, or the same pipeline built again, reads other windows")
	}
	other, _ := data.TextWindows(text, 4, 200, 2)
	if slices.Equal(windows(t, other, 4), starts) {
		t.Error("seed 2 reads the windows of seed 1")
	}
	endless, _ := data.TextWindows(text, 4, -1, 1)
	if endless.Cardinality() != data.Infinite || !slices.Equal(windows(t, endless.Take(200), 4), starts) {
		t.Error("the endless dataset does not begin with the 200 windows")
	}
	text[0] = 99 // TextWindows copied the text
	if got := windows(t, ds, 4); !slices.Equal(got, starts) {
		t.Error("changing the text changed the windows")
	}

	for _, c := range []struct {
		len, window int
		want        string
	}{
		{64, 80, "data: invalid argument: TextWindows: a window of 80 needs a text of at least 81 ids (the targets run one further), got 64"},
		{64, 64, "data: invalid argument: TextWindows: a window of 64 needs a text of at least 65 ids (the targets run one further), got 64"},
	} {
		if _, err := data.TextWindows(seqInts(c.len), c.window, 1, 0); err == nil || err.Error() != c.want || !errors.Is(err, data.ErrArgument) {
			t.Errorf("window %d of a text of %d: error %v, want %q", c.window, c.len, err, c.want)
		}
	}
	if _, err := data.TextWindows(seqInts(5), 4, 1, 0); err != nil {
		t.Errorf("window 4 of a text of 5: %v", err)
	}
	if err, _ := panics(func() { data.TextWindows(text, 0, 1, 0) }).(error); !errors.Is(err, data.ErrArgument) {
		t.Errorf("window 0: panic %v, want ErrArgument", err)
	}
}

// TestTextWindowsDistributed: a strategy's replicas get the rows of each
// global batch of windows, in order.
func TestTextWindowsDistributed(t *testing.T) {
	ds, err := data.TextWindows(seqInts(50), 8, 12, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := strategy.NewMirrored(strategy.WithReplicas(2))
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	var got, want []float64
	it := s.DistributeDataset(ds.Batch(4)).Iter()
	for it.Next() {
		b := it.Batch()
		for r := range 2 {
			x, y := b.Replica(r)[0], b.Replica(r)[1]
			if fmt.Sprint(x.Shape, y.Shape) != "[2 8] [2 8]" {
				t.Fatalf("replica %d: shapes %v %v, want [2 8] [2 8]", r, x.Shape, y.Shape)
			}
			got = append(got, x.Data...)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	local := ds.Iter()
	for local.Next() {
		want = append(want, local.Value()[0].Data...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the replicas read %v, want %v", got, want)
	}
}

func ExampleTextWindows() {
	text := "to be or not to be"
	vocab := data.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	train, val := data.TrainValSplit(ids, 0.9)
	fmt.Println(vocab, len(train), len(val))

	ds, _ := data.TextWindows(train, 6, 3, 1)
	it := ds.Iter()
	for it.Next() {
		x, y := it.Value()[0], it.Value()[1]
		fmt.Printf("%q -> %q\n", vocab.DecodeTensor(x), vocab.DecodeTensor(y))
	}
	// Output:
	// CharVocab{7 characters: " benort"} 16 2
	// " or no" -> "or not"
	// "not to" -> "ot to "
	// "r not " -> " not t"
}

func ExampleCharVocab_Encode() {
	vocab := data.NewCharVocab("hello, world")
	ids, _ := vocab.Encode("low")
	fmt.Println(vocab.Size(), ids, vocab.Decode(ids))
	_, err := vocab.Encode("hello!")
	fmt.Println(err)
	// Output:
	// 9 [5 6 8] low
	// data: invalid argument: CharVocab.Encode: character '!' at position 5 is not in the vocabulary of 9 characters
}

func ExampleReadText() {
	_, err := data.ReadText(strings.NewReader("ok\xc3("))
	fmt.Println(err)
	// Output:
	// data: text: offset 2: want UTF-8, got byte 0xc3
}
