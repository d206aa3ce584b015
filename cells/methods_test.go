package cells_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gotrain/gotrain/cells/rt"
	"github.com/gotrain/gotrain/internal/stepdeps"
)

// TestIssue30Methods redefines methods in later cells: with the receiver
// and signature they had, every value of the type runs the new body, made
// before or after, called directly, through an earlier cell's function or
// method, a method value or an interface; nothing declares the type again.
func TestIssue30Methods(t *testing.T) {
	type cell struct {
		code, out string
		notes     []string
	}
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
			s := newSession(t)
			for i, c := range tt.cells {
				cell, err := s.c.Compile(context.Background(), c.code)
				if err != nil {
					t.Fatalf("cell %d: %v\n%s", i+1, err, c.code)
				}
				if strings.Join(cell.Notices, "\n") != strings.Join(c.notes, "\n") {
					t.Errorf("cell %d notes %q, want %q", i+1, cell.Notices, c.notes)
				}
				if i > 0 && strings.Contains(cell.Source(), "\ntype ") {
					t.Errorf("cell %d declares a type again:\n%s", i+1, cell.Source())
				}
				s.want(c.code, c.out)
			}
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
