package session

import (
	"reflect"
	"testing"
)

func TestSplitCell(t *testing.T) {
	tests := []struct {
		name string
		code string
		want []string // kind:text of each chunk
	}{
		{"statements only", "x := 1\ny := 2", []string{"statements:x := 1\ny := 2"}},
		{"imports then code", "import \"fmt\"\nfmt.Println(1)", []string{"imports:import \"fmt\"", "statements:fmt.Println(1)"}},
		{"declaration between statements", "x := 1\nfunc f() int {\n\treturn x\n}\ny := f()", []string{"statements:x := 1", "declarations:func f() int {\n\treturn x\n}", "statements:y := f()"}},
		{"method declaration", "func (p P) M() {}", []string{"declarations:func (p P) M() {}"}},
		{"generic method receiver", "func (l List[T]) Len() int { return 0 }", []string{"declarations:func (l List[T]) Len() int { return 0 }"}},
		{"func literal call is a statement", "func() {\n\tprintln(1)\n}()", []string{"statements:func() {\n\tprintln(1)\n}()"}},
		{"func literal with result", "func() int { return 1 }()", []string{"statements:func() int { return 1 }()"}},
		{"grouped declarations", "const (\n\ta = 1\n\tb = 2\n)\nvar c = a + b\ntype T struct{}", []string{"declarations:const (\n\ta = 1\n\tb = 2\n)\nvar c = a + b\ntype T struct{}"}},
		{"semicolons on one line", "a := 1; var b = 2; a++", []string{"statements:a := 1", "declarations:var b = 2", "statements:a++"}},
		{"comments between", "// setup\nx := 1\n\n/* done */", []string{"statements:x := 1"}},
		{"unclosed paren runs to the end", "fmt.Println(\n}", []string{"statements:fmt.Println(\n}"}},
		{"empty", "  \n// nothing\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range splitCell(tt.code) {
				got = append(got, c.kind.String()+":"+tt.code[c.start:c.end])
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splitCell(%q)\ngot  %q\nwant %q", tt.code, got, tt.want)
			}
		})
	}
}
