package display

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"maps"
	"slices"
	"strings"

	"github.com/gotrain/gotrain/internal/safepoint"
)

// MIME types used in bundles.
const (
	MIMEText     = "text/plain"
	MIMEHTML     = "text/html"
	MIMEMarkdown = "text/markdown"
	MIMELaTeX    = "text/latex"
	MIMESVG      = "image/svg+xml"
	MIMEPNG      = "image/png"
	MIMEJPEG     = "image/jpeg"
	MIMEJSON     = "application/json"
)

// Value is a representation ready to be shown: a Bundle that always holds
// text/plain. The constructors (HTML, Markdown, SVG, PNG, JPEG, JSON, LaTeX,
// Text, Image) build one; a cell whose last expression is a Value shows it
// as the cell's result.
//
// A Value is immutable and safe for concurrent use.
type Value struct {
	bundle Bundle // never mutated after construction; always has text/plain
	err    error  // why the input could not be encoded; nil when it could
}

// Render returns a copy of the value's bundle, so callers may change it.
func (v Value) Render() Bundle {
	if v.bundle == nil {
		// The zero Value shows as an empty text rather than nothing, so
		// every bundle keeps the text/plain promise.
		return Bundle{MIMEText: ""}
	}
	return maps.Clone(v.bundle)
}

// Show displays the value now, as a new output of the running cell.
func (v Value) Show() { Show(v) }

// String returns the text/plain form, so fmt prints a Value readably.
func (v Value) String() string {
	s, _ := v.bundle[MIMEText].(string)
	return s
}

// Err reports why the constructor's input could not be encoded (not a PNG,
// a value encoding/json rejects); the Value then shows the error as text.
// It is nil for a good Value.
func (v Value) Err() error { return v.err }

func errValue(err error) Value {
	return Value{bundle: Bundle{MIMEText: err.Error()}, err: err}
}

// HTML returns s as text/html. Its text/plain form is s with the tags
// removed, scripts and styles dropped and entities decoded, which is what
// consoles and nbconvert's text export show.
func HTML(s string) Value {
	plain := htmlToText(s)
	if plain == "" {
		plain = "[HTML]"
	}
	return Value{bundle: Bundle{MIMEHTML: s, MIMEText: plain}}
}

// Markdown returns s as text/markdown; Markdown reads well as plain text, so
// text/plain is s itself.
func Markdown(s string) Value {
	return Value{bundle: Bundle{MIMEMarkdown: s, MIMEText: s}}
}

// SVG returns s, a complete <svg> document, as image/svg+xml.
func SVG(s string) Value {
	return Value{bundle: Bundle{MIMESVG: s, MIMEText: "[SVG image]"}}
}

// LaTeX returns s as text/latex. Jupyter typesets only delimited math, so s
// is wrapped in $$…$$ when it holds no delimiter ($, \[, \( or \begin);
// text/plain is s as given.
func LaTeX(s string) Value {
	tex := s
	if !strings.Contains(s, "$") && !strings.Contains(s, `\[`) &&
		!strings.Contains(s, `\(`) && !strings.Contains(s, `\begin`) {
		tex = "$$" + s + "$$"
	}
	return Value{bundle: Bundle{MIMELaTeX: tex, MIMEText: s}}
}

// Text returns s as text/plain only.
func Text(s string) Value {
	return Value{bundle: Bundle{MIMEText: s}}
}

// PNG returns encoded PNG data as image/png. Data that does not start with
// a readable PNG header gives a Value whose Err says so.
func PNG(data []byte) Value {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return errValue(fmt.Errorf("display: could not read PNG header (got %d bytes): %w", len(data), err))
	}
	return imageValue(MIMEPNG, "PNG", data, cfg)
}

// JPEG returns encoded JPEG data as image/jpeg. Data that does not start
// with a readable JPEG header gives a Value whose Err says so.
func JPEG(data []byte) Value {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return errValue(fmt.Errorf("display: could not read JPEG header (got %d bytes): %w", len(data), err))
	}
	return imageValue(MIMEJPEG, "JPEG", data, cfg)
}

func imageValue(mime, kind string, data []byte, cfg image.Config) Value {
	return Value{bundle: Bundle{
		mime:     base64.StdEncoding.EncodeToString(data),
		MIMEText: fmt.Sprintf("[%s image %dx%d]", kind, cfg.Width, cfg.Height),
	}}
}

// Image encodes img as PNG and returns it as image/png. A nil or empty
// image gives a Value whose Err says so.
func Image(img image.Image) Value {
	if img == nil {
		return errValue(fmt.Errorf("display: Image: want an image, got nil"))
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return errValue(fmt.Errorf("display: could not encode %v image as PNG: %w", img.Bounds().Size(), err))
	}
	return imageValue(MIMEPNG, "PNG", buf.Bytes(), image.Config{
		Width: img.Bounds().Dx(), Height: img.Bounds().Dy(),
	})
}

// JSON returns v, encoded by encoding/json now, as application/json; the
// bundle holds a json.RawMessage, so later changes to v do not show. A
// json.RawMessage v is used as is once checked. text/plain is the indented
// JSON. A v that encoding/json rejects (a NaN, a channel) gives a Value
// whose Err says so.
func JSON(v any) Value {
	raw, ok := v.(json.RawMessage)
	if ok {
		if !json.Valid(raw) {
			return errValue(fmt.Errorf("display: JSON: want valid JSON, got %d bytes that are not", len(raw)))
		}
		raw = slices.Clone(raw) // the caller may reuse its buffer
	} else {
		// Without HTML escaping, "a<b" stays readable in text/plain.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return errValue(fmt.Errorf("display: could not encode %T as JSON: %w", v, err))
		}
		raw = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, raw, "", "  "); err != nil {
		// Unreachable: raw is valid JSON either way.
		return errValue(fmt.Errorf("display: could not indent JSON: %w", err))
	}
	return Value{bundle: Bundle{
		MIMEJSON: raw,
		MIMEText: indented.String(),
	}}
}

// Render makes a Bundle a Renderer, so Show accepts a hand-built bundle.
func (b Bundle) Render() Bundle { return b }

// Show displays v now as a new output of the running cell: its bundle if v
// is a Renderer, otherwise v formatted with %v as text/plain. A bundle that
// lacks text/plain gets one. Show is a safe point: it panics with
// safepoint.ErrInterrupted when an interrupt is pending, so a loop that
// shows output stops.
func Show(v any) {
	safepoint.Check()
	sink().Display(bundleOf(v), "", false)
}

// bundleOf is what Show and Handle send for v: never nil, always with
// text/plain.
func bundleOf(v any) Bundle {
	r, ok := v.(Renderer)
	if !ok {
		return Bundle{MIMEText: fmt.Sprint(v)}
	}
	b := r.Render()
	if _, ok := b[MIMEText].(string); ok {
		return b
	}
	b = maps.Clone(b)
	if b == nil {
		b = Bundle{}
	}
	if _, isBundle := v.(Bundle); isBundle {
		// A bare bundle's %v would print its whole payload (base64 and
		// all); name its types instead.
		b[MIMEText] = "[" + strings.Join(slices.Sorted(maps.Keys(b)), " ") + "]"
	} else {
		b[MIMEText] = fmt.Sprint(v)
	}
	return b
}
