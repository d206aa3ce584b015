package display

import (
	"html"
	"strings"
)

// htmlToText turns an HTML fragment into the readable text a console or a
// text export should show: tags removed, script and style bodies and
// comments dropped, block elements on lines of their own, entities decoded
// and runs of blank space collapsed. It is a fallback, not a parser: it
// never fails and does not check that the markup is well formed.
func htmlToText(s string) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '<' || !startsTag(s[i+1:]) {
			j := strings.IndexByte(s[i+1:], '<') + 1
			if j == 0 {
				j = len(s) - i
			}
			out.WriteString(s[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		end := tagEnd(s, i)
		name := tagName(s[i+1 : end])
		i = end + 1
		if i > len(s) {
			i = len(s)
		}
		switch name {
		case "script", "style":
			// Their bodies are code, not text; skip to the closing tag.
			closing := strings.Index(strings.ToLower(s[i:]), "</"+name)
			if closing < 0 {
				i = len(s)
				continue
			}
			i += closing
		case "br", "p", "/p", "div", "/div", "li", "tr", "/tr", "table", "/table",
			"h1", "h2", "h3", "h4", "h5", "h6", "/h1", "/h2", "/h3", "/h4", "/h5", "/h6",
			"ul", "/ul", "ol", "/ol", "pre", "/pre", "hr":
			out.WriteByte('\n')
		case "td", "th":
			out.WriteByte(' ')
		}
	}
	return collapseSpace(html.UnescapeString(out.String()))
}

// startsTag reports whether the text after a '<' begins a tag, a closing
// tag or a comment; a lone '<' as in "a < b" is text.
func startsTag(rest string) bool {
	if rest == "" {
		return false
	}
	c := rest[0]
	return c == '/' || c == '!' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// tagEnd returns the index of the '>' that closes the tag opening at i,
// ignoring any '>' inside quoted attribute values, or len(s) if none does.
func tagEnd(s string, i int) int {
	var quote byte
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j
		}
	}
	return len(s)
}

// tagName returns the lower-case element name of a tag body such as
// `/TD class="x"`, keeping a leading '/' for closing tags.
func tagName(body string) string {
	end := strings.IndexAny(body, " \t\n\r/>")
	if strings.HasPrefix(body, "/") {
		rest := body[1:]
		end = strings.IndexAny(rest, " \t\n\r>")
		if end < 0 {
			end = len(rest)
		}
		return "/" + strings.ToLower(rest[:end])
	}
	if end < 0 {
		end = len(body)
	}
	return strings.ToLower(body[:end])
}

// collapseSpace trims every line, squeezes runs of spaces and tabs to one
// space and drops empty lines.
func collapseSpace(s string) string {
	var lines []string
	for line := range strings.Lines(s) {
		if f := strings.Fields(line); len(f) > 0 {
			lines = append(lines, strings.Join(f, " "))
		}
	}
	return strings.Join(lines, "\n")
}
