package display

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gotrain/gotrain/internal/safepoint"
)

func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(10 * x), uint8(10 * y), 128, 255})
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestConstructors(t *testing.T) {
	img := testImage(4, 3)
	pngData := encodePNG(t, img)
	jpegData := encodeJPEG(t, img)
	b64 := base64.StdEncoding.EncodeToString

	tests := []struct {
		name string
		v    Value
		want Bundle // every MIME type and its exact content
	}{
		{"HTML", HTML("<b>bold</b> &amp; <i>it</i>"), Bundle{
			MIMEHTML: "<b>bold</b> &amp; <i>it</i>", MIMEText: "bold & it"}},
		{"HTML without text", HTML("<img src='x.png'>"), Bundle{
			MIMEHTML: "<img src='x.png'>", MIMEText: "[HTML]"}},
		{"Markdown", Markdown("# Title\n*x*"), Bundle{
			MIMEMarkdown: "# Title\n*x*", MIMEText: "# Title\n*x*"}},
		{"SVG", SVG(`<svg xmlns="http://www.w3.org/2000/svg"/>`), Bundle{
			MIMESVG: `<svg xmlns="http://www.w3.org/2000/svg"/>`, MIMEText: "[SVG image]"}},
		{"LaTeX bare", LaTeX(`x^2`), Bundle{MIMELaTeX: `$$x^2$$`, MIMEText: `x^2`}},
		{"LaTeX delimited", LaTeX(`$x^2$`), Bundle{MIMELaTeX: `$x^2$`, MIMEText: `$x^2$`}},
		{"LaTeX environment", LaTeX(`\begin{align}a\end{align}`), Bundle{
			MIMELaTeX: `\begin{align}a\end{align}`, MIMEText: `\begin{align}a\end{align}`}},
		{"Text", Text("plain"), Bundle{MIMEText: "plain"}},
		{"PNG", PNG(pngData), Bundle{MIMEPNG: b64(pngData), MIMEText: "[PNG image 4x3]"}},
		{"JPEG", JPEG(jpegData), Bundle{MIMEJPEG: b64(jpegData), MIMEText: "[JPEG image 4x3]"}},
		{"Image", Image(img), Bundle{MIMEPNG: b64(pngData), MIMEText: "[PNG image 4x3]"}},
		{"JSON", JSON(map[string]any{"b": []int{1, 2}, "a": 1.5}), Bundle{
			MIMEJSON: json.RawMessage(`{"a":1.5,"b":[1,2]}`),
			MIMEText: "{\n  \"a\": 1.5,\n  \"b\": [\n    1,\n    2\n  ]\n}"}},
		{"JSON markup", JSON([]string{"a<b&c"}), Bundle{
			MIMEJSON: json.RawMessage(`["a<b&c"]`), MIMEText: "[\n  \"a<b&c\"\n]"}},
		{"JSON raw", JSON(json.RawMessage(`[1, 2]`)), Bundle{
			MIMEJSON: json.RawMessage(`[1, 2]`), MIMEText: "[\n  1,\n  2\n]"}},
		{"zero Value", Value{}, Bundle{MIMEText: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.v.Err(); err != nil {
				t.Fatalf("Err() = %v, want nil", err)
			}
			got := tt.v.Render()
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tt.want))) {
				t.Fatalf("MIME types = %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tt.want)))
			}
			for mime, want := range tt.want {
				if raw, ok := want.(json.RawMessage); ok {
					if g, _ := got[mime].(json.RawMessage); !bytes.Equal(g, raw) {
						t.Errorf("%s = %s, want %s", mime, g, raw)
					}
					continue
				}
				if got[mime] != want {
					t.Errorf("%s = %q, want %q", mime, got[mime], want)
				}
			}
			if tt.v.String() != tt.want[MIMEText] {
				t.Errorf("String() = %q, want %q", tt.v.String(), tt.want[MIMEText])
			}
		})
	}
}

func TestJSONSnapshot(t *testing.T) {
	m := map[string]int{"a": 1}
	v := JSON(m)
	m["a"] = 2
	if got := string(v.Render()[MIMEJSON].(json.RawMessage)); got != `{"a":1}` {
		t.Errorf("after changing the map, application/json = %s, want {\"a\":1}", got)
	}
}

func TestConstructorErrors(t *testing.T) {
	tests := []struct {
		name    string
		v       Value
		wantMsg string // a substring of the error
	}{
		{"PNG garbage", PNG([]byte("GIF89a....")), "display: could not read PNG header (got 10 bytes)"},
		{"PNG empty", PNG(nil), "display: could not read PNG header (got 0 bytes)"},
		{"JPEG garbage", JPEG([]byte{1, 2, 3}), "display: could not read JPEG header (got 3 bytes)"},
		{"JSON NaN", JSON(math.NaN()), "display: could not encode float64 as JSON"},
		{"JSON channel", JSON(make(chan int)), "display: could not encode chan int as JSON"},
		{"JSON invalid raw", JSON(json.RawMessage("{")), "display: JSON: want valid JSON, got 1 bytes"},
		{"Image nil", Image(nil), "display: Image: want an image, got nil"},
		{"Image empty", Image(image.NewRGBA(image.Rect(0, 0, 0, 0))), "display: could not encode (0,0) image as PNG"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Err()
			if err == nil {
				t.Fatal("Err() = nil, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Err() = %q, want it to contain %q", err, tt.wantMsg)
			}
			b := tt.v.Render()
			if len(b) != 1 || b[MIMEText] != err.Error() {
				t.Errorf("bundle = %v, want only text/plain %q", b, err)
			}
		})
	}
}

func TestRenderReturnsCopy(t *testing.T) {
	v := HTML("<b>x</b>")
	v.Render()[MIMEHTML] = "changed"
	if got := v.Render()[MIMEHTML]; got != "<b>x</b>" {
		t.Errorf("after changing a rendered bundle, text/html = %q, want <b>x</b>", got)
	}
}

// stringer renders without text/plain, so Show must add one.
type noPlain struct{ n int }

func (p noPlain) Render() Bundle { return Bundle{MIMEHTML: "<i>p</i>"} }

func TestShow(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want Bundle
	}{
		{"Value", HTML("<b>x</b>"), Bundle{MIMEHTML: "<b>x</b>", MIMEText: "x"}},
		{"int", 42, Bundle{MIMEText: "42"}},
		{"nil", nil, Bundle{MIMEText: "<nil>"}},
		{"error", errors.New("boom"), Bundle{MIMEText: "boom"}},
		{"bare bundle", Bundle{MIMEHTML: "<p>", MIMESVG: "<svg/>"}, Bundle{
			MIMEHTML: "<p>", MIMESVG: "<svg/>", MIMEText: "[image/svg+xml text/html]"}},
		{"renderer without text/plain", noPlain{7}, Bundle{MIMEHTML: "<i>p</i>", MIMEText: "{7}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := useFakeSink(t)
			Show(tt.v)
			calls := s.snapshot()
			if len(calls) != 1 {
				t.Fatalf("%d Display calls, want 1", len(calls))
			}
			c := calls[0]
			if c.id != "" || c.update {
				t.Errorf("Display(id %q, update %v), want a new output without id", c.id, c.update)
			}
			if !maps.Equal(c.b, tt.want) {
				t.Errorf("bundle = %v, want %v", c.b, tt.want)
			}
		})
	}
}

func TestShowBareBundleIsNotMutated(t *testing.T) {
	useFakeSink(t)
	b := Bundle{MIMEHTML: "<p>"}
	Show(b)
	if _, ok := b[MIMEText]; ok {
		t.Error("Show added text/plain to the caller's bundle")
	}
}

func TestHandle(t *testing.T) {
	s := useFakeSink(t)
	h := NewHandle()
	h.Update(Text("before show")) // shows, since nothing is shown yet
	h.Show(Text("second output"))
	h.Update(Text("updated"))
	want := []displayCall{
		{Bundle{MIMEText: "before show"}, h.ID(), false},
		{Bundle{MIMEText: "second output"}, h.ID(), false},
		{Bundle{MIMEText: "updated"}, h.ID(), true},
	}
	got := s.snapshot()
	if len(got) != len(want) {
		t.Fatalf("%d Display calls, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if !maps.Equal(got[i].b, want[i].b) || got[i].id != want[i].id || got[i].update != want[i].update {
			t.Errorf("call %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestHandleIDsUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := NewHandle().ID()
		if seen[id] {
			t.Fatalf("NewHandle reused display id %q", id)
		}
		if !strings.HasPrefix(id, "gotrain-") {
			t.Fatalf("display id %q, want prefix gotrain-", id)
		}
		seen[id] = true
	}
}

func TestHandleConcurrentFirstUpdate(t *testing.T) {
	s := useFakeSink(t)
	h := NewHandle()
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			h.Update(Text("x"))
		}()
	}
	for range 8 {
		<-done
	}
	calls := s.snapshot()
	if len(calls) != 8 || calls[0].update {
		t.Fatalf("calls = %+v, want 8 with the first a display", calls)
	}
	for _, c := range calls[1:] {
		if !c.update {
			t.Errorf("a later call is a new display, want updates only after the first")
		}
	}
}

func TestClear(t *testing.T) {
	s := useFakeSink(t)
	Clear(true)
	Clear(false)
	if !slices.Equal(s.clears, []bool{true, false}) {
		t.Errorf("Clear calls = %v, want [true false]", s.clears)
	}
}

func TestShowIsSafePoint(t *testing.T) {
	s := useFakeSink(t)
	safepoint.Clear()
	defer safepoint.Clear()
	safepoint.Raise()
	h := NewHandle()
	for name, fn := range map[string]func(){
		"Show":          func() { Show(1) },
		"Handle.Show":   func() { h.Show(1) },
		"Handle.Update": func() { h.Update(1) },
	} {
		if got := panics(fn); got != safepoint.ErrInterrupted {
			t.Errorf("%s with an interrupt pending panicked with %v, want ErrInterrupted", name, got)
		}
	}
	if n := len(s.snapshot()); n != 0 {
		t.Errorf("%d outputs sent while interrupted, want 0", n)
	}
}

func TestHTMLToText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", "hello"},
		{"tags", "<b>bold</b> and <i>it</i>", "bold and it"},
		{"entities", "a &lt; b &amp;&amp; c&nbsp;d", "a < b && c d"},
		{"lone less-than", "a < b", "a < b"},
		{"script and style", "x<script>if (a<b) {}</script><STYLE>p{}</STYLE>y", "xy"},
		{"comment", "a<!-- <b>hidden</b> -->b", "ab"},
		{"unclosed comment", "a<!-- rest", "a"},
		{"quoted >", `<a title="x>y" href='>'>link</a>`, "link"},
		{"blocks", "<p>one</p><p>two<br>three</p><ul><li>a</li><li>b</li></ul>", "one\ntwo\nthree\na\nb"},
		{"table", "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>", "k v\na 1"},
		{"whitespace", "  a \n\n\t b  ", "a\nb"},
		{"unclosed tag", "a<b", "a"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := htmlToText(tt.in); got != tt.want {
				t.Errorf("htmlToText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
