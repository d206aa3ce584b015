package cells_test

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gotrain/gotrain/cells"
	"github.com/gotrain/gotrain/cells/rt"
	"github.com/gotrain/gotrain/internal/stepdeps"
)

// TestIssue30Methods redefines methods in later cells: with the receiver
// and signature they had, every value of the type runs the new body, made
// before or after, called directly, through an earlier cell's function or
// method, a method value or an interface; nothing declares the type again.
func TestIssue30Methods(t *testing.T) {
	type cell = sessionCell
	for _, tt := range []struct {
		name  string
		cells []cell
	}{
		{"the issue's case", []cell{
			{code: "import \"fmt\"\ntype T struct{ n int }\nfunc (t *T) Hello() string { return \"old\" }\ntype Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello() }\nbox := &Box{&T{}}\ntaken := box.t"},
			{code: "func (t *T) Hello() string { return \"new\" }"},
			{code: "fmt.Println(box.t.Hello(), box.Say(), taken.Hello())\nb2 := &Box{&T{}}\nfmt.Println(b2.t.Hello(), b2.Say())", out: "new new new\nnew new\n"},
		}},
		{"a value receiver, unexported fields and methods, a method value and an interface", []cell{
			{code: "import \"fmt\"\ntype point struct{ x, y int }\nfunc (p point) sum() int { return p.x + p.y }\nfunc (p point) twice() int { return 2 * p.sum() }\ntype summer interface{ sum() int }\np := point{1, 2}\nf := p.sum\nvar s summer = p\nfmt.Println(p.sum(), p.twice(), f(), s.sum())", out: "3 6 3 3\n"},
			{code: "func (p point) sum() int { return 10*p.x + p.y }\nfmt.Println(p.sum(), p.twice(), f(), s.sum(), point{3, 4}.sum())", out: "12 24 12 12 34\n"},
		}},
		{"a pointer receiver that writes a field, unnamed receiver and parameters", []cell{
			{code: "import \"fmt\"\ntype counter struct{ n int }\nfunc (c *counter) add(k int) { c.n += k }\nfunc (*counter) kind(string) string { return \"plain\" }\nc := &counter{}\nc.add(2)\nfmt.Println(c.n, c.kind(\"\"))", out: "2 plain\n"},
			{code: "func (c *counter) add(k int) { c.n += 100 * k }\nfunc (*counter) kind(string) string { return \"scaled\" }\nc.add(1)\nfmt.Println(c.n, c.kind(\"\"))", out: "102 scaled\n"},
		}},
		{"running the first declaration again makes it the one called", []cell{
			{code: "import \"fmt\"\ntype V struct{}\nfunc (V) Get() int { return 1 }\nfunc show(v V) { fmt.Println(v.Get()) }"},
			{code: "func (V) Get() int { return 2 }\nshow(V{})", out: "2\n"},
			{code: "func (V) Get() int { return 3 }\nshow(V{})", out: "3\n"},
			{code: "func (V) Get() int { return 2 }\nshow(V{})", out: "2\n"},
		}},
		{"an exported method and recursion through the receiver", []cell{
			{code: "import \"fmt\"\ntype Node struct{ next *Node }\nfunc (n *Node) Len() int { if n == nil { return 0 }; return 1 + n.next.Len() }\nlist := &Node{&Node{&Node{}}}\nfmt.Println(list.Len())", out: "3\n"},
			{code: "func (n *Node) Len() int { if n == nil { return 0 }; return 10 + n.next.Len() }\nfmt.Println(list.Len())", out: "30\n"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runCells(t, tt.cells, func(i int, cell *cells.Cell) {
				if i > 0 && strings.Contains(cell.Source(), "\ntype ") {
					t.Errorf("cell %d declares a type again:\n%s", i+1, cell.Source())
				}
			})
		})
	}
}

// TestIssue30StepWatchesMethods: a step function calling a method through
// an earlier cell's method watches the method's slot, whose bytes change
// when a later cell redefines the method, so a strategy retraces the step.
func TestIssue30StepWatchesMethods(t *testing.T) {
	s := newSession(t)
	s.want("import \"fmt\"\ntype Block struct{ k float64 }\nfunc (b *Block) Call(x float64) float64 { return b.k * x }\ntype GPT struct{ blocks []*Block }\nfunc (g *GPT) Call(x float64) float64 {\n\tfor _, b := range g.blocks {\n\t\tx = b.Call(x)\n\t}\n\treturn x\n}\nmodel := &GPT{[]*Block{{2}, {3}}}", "")
	s.want("step := func(x float64) float64 { return model.Call(x) }", "")
	if _, err := s.run("step"); err != nil {
		t.Fatal(err)
	}
	v, _ := rt.TakeResult()
	_, deps := stepdeps.Watch(reflect.ValueOf(v).Pointer())
	var block *stepdeps.Dep
	var names []string
	for i, d := range deps {
		names = append(names, d.Name)
		if d.Name == "Block.Call" {
			block = &deps[i]
		}
	}
	if block == nil || !block.Code {
		t.Fatalf("watched %v, want Block.Call among them, as code", names)
	}
	before := string(unsafe.Slice((*byte)(block.Addr), block.Size))
	s.want("func (b *Block) Call(x float64) float64 { return b.k * x + 1 }\nfmt.Println(step(1))", "10\n")
	if after := string(unsafe.Slice((*byte)(block.Addr), block.Size)); after == before {
		t.Error("Block.Call's slot did not change when a cell redefined it")
	}
}

// TestIssue30NewType changes what a type is (a method's signature, a new
// method, its fields): the type is declared anew, the note names
// everything that keeps the old one, transitively, and a later cell that
// names one of those is refused, naming the cell to run again, so that no
// value made afterwards mixes old code and new.
func TestIssue30NewType(t *testing.T) {
	type cell = sessionCell
	const box = "import \"fmt\"\ntype T struct{ n int }\nfunc (t *T) Hello() string { return \"old\" }\ntype Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello() }\nfunc newBox() *Box { return &Box{&T{}} }\nfunc speak() string { return newBox().Say() }\nfunc other() int { return 1 }\nbox := newBox()\ntaken := box.t\nn := 3"
	for _, tt := range []struct {
		name  string
		cells []cell
	}{
		{"a changed signature", []cell{
			{code: box},
			{code: "func (t *T) Hello(to string) string { return \"hello \" + to }",
				notes: []string{"T declared again with the methods this cell adds or changes (Go keeps a type's methods with the type); these keep the old T until their cells run again: Box, Box.Say, newBox, speak; these variables hold values of the old T until the cells that make them run again: box, taken; a later cell that uses them is refused until then"}},
			{code: "b2 := &Box{&T{}}", err: "1:8: Box keeps the old T, which a later cell declared again: run again the cell where Box is declared (its line 4: type Box struct{ t *T }), so that it uses the new T"},
			{code: "fmt.Println(box.Say())", err: "box keeps the old T"},
			{code: "fmt.Println(speak())", err: "speak keeps the old T"},
			{code: "fmt.Println((&T{}).Hello(\"you\"), other(), n)", out: "hello you 1 3\n"},
			// speak keeps calling the old newBox, of another signature.
			{code: "type Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello(\"box\") }\nfunc newBox() *Box { return &Box{&T{}} }\nfmt.Println(newBox().Say())", out: "hello box\n",
				notes: []string{"Box redefined as a new type; these keep the old Box until their cells run again: speak; these variables hold values of the old Box until the cells that make them run again: box; a later cell that uses them is refused until then",
					"newBox redefined with another signature: these keep calling the old one: speak"}},
			{code: "fmt.Println(speak())", err: "speak keeps the old Box"},
			{code: "func speak() string { return newBox().Say() }\nfmt.Println(speak())", out: "hello box\n"},
		}},
		// The pass that declares one type again still lets a method of
		// another type, declared again with its signature, take its slot;
		// so does the pass after a signature changed.
		{"a type declared again and another type's method redefined in one cell", []cell{
			{code: "import \"fmt\"\ntype A struct{}\nfunc (A) F() string { return \"a1\" }\ntype B struct{}\nfunc (B) G() string { return \"b1\" }\nfunc show() { fmt.Println(B{}.G()) }\nb := B{}"},
			{code: "func (A) H() string { return \"h\" }\nfunc (B) G() string { return \"b2\" }\nfmt.Println(A{}.H(), A{}.F(), B{}.G(), b.G())\nshow()", out: "h a1 b2 b2\nb2\n"},
			{code: "func (A) F(x int) string { return fmt.Sprint(\"a\", x) }\nfunc (B) G() string { return \"b3\" }\nfmt.Println(A{}.F(2), b.G())\nshow()", out: "a2 b3\nb3\n"},
		}},
		{"a method added to a type a model holds", []cell{
			{code: "import \"fmt\"\ntype Block struct{ k int }\nfunc (b *Block) Call(x int) int { return b.k * x }\ntype GPT struct{ blocks []*Block }\nfunc (g *GPT) Call(x int) int {\n\tfor _, b := range g.blocks {\n\t\tx = b.Call(x)\n\t}\n\treturn x\n}\nfunc newGPT() *GPT { return &GPT{[]*Block{{2}, {3}}} }\nmodel := newGPT()"},
			{code: "func (b *Block) Describe() string { return fmt.Sprint(\"block \", b.k) }\nfmt.Println((&Block{4}).Describe(), (&Block{4}).Call(2))", out: "block 4 8\n",
				notes: []string{"Block declared again with the methods this cell adds or changes (Go keeps a type's methods with the type); these keep the old Block until their cells run again: GPT, GPT.Call, newGPT; these variables hold values of the old Block until the cells that make them run again: model; a later cell that uses them is refused until then"}},
			{code: "fmt.Println(model.Call(1))", err: "model keeps the old Block"},
			{code: "g := &GPT{[]*Block{{5}}}", err: "GPT keeps the old Block"},
		}},
		// A generic type's method has no slot: declared again, it makes the
		// type new.
		{"a method of a generic type", []cell{
			{code: "import \"fmt\"\ntype Stack[E any] struct{ items []E }\nfunc (s *Stack[E]) Push(e E) { s.items = append(s.items, e) }\nfunc (s *Stack[E]) Len() int { return len(s.items) }\nst := &Stack[int]{}\nst.Push(1)"},
			{code: "func (s *Stack[E]) Len() int { return 100 + len(s.items) }\nfmt.Println((&Stack[string]{}).Len())", out: "100\n",
				notes: []string{"Stack declared again with the methods this cell adds or changes (Go keeps a type's methods with the type); these variables hold values of the old Stack until the cells that make them run again: st; a later cell that uses them is refused until then"}},
			{code: "fmt.Println(st.Len())", err: "st keeps the old Stack"},
		}},
		{"fields changed; the same body redefined is late-bound again", []cell{
			{code: "import \"fmt\"\ntype P struct{ x int }\nfunc (p P) Get() int { return p.x }\nfunc twice(p P) int { return 2 * p.Get() }"},
			{code: "type P struct{ x, y int }\nfunc (p P) Get() int { return p.x + p.y }",
				notes: []string{"P redefined as a new type; these keep the old P until their cells run again: twice; a later cell that uses them is refused until then"}},
			{code: "fmt.Println(twice(P{1, 2}))", err: "twice keeps the old P"},
			{code: "func twice(p P) int { return 2 * p.Get() }\nfmt.Println(twice(P{1, 2}))", out: "6\n"},
			{code: "func (p P) Get() int { return p.x * p.y }\nfmt.Println(twice(P{2, 5}))", out: "20\n"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) { runCells(t, tt.cells, nil) })
	}
}
