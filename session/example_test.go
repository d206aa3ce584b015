package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gotrain/gotrain/kernel"
	"github.com/gotrain/gotrain/session"
)

// printOutput is a kernel.Output that prints what a cell shows.
type printOutput struct{}

func (printOutput) Stream(name, text string) { fmt.Printf("[%s] %s", name, text) }
func (printOutput) Display(data kernel.MIMEBundle, _ map[string]any, _ string, _ bool) {
	fmt.Println("[display]", data["text/plain"])
}
func (printOutput) ClearOutput(bool)                   {}
func (printOutput) Input(string, bool) (string, error) { return "", errors.New("no stdin") }

func execute(s *session.Session, code string) {
	res := s.Execute(context.Background(), kernel.ExecuteRequest{Code: code}, printOutput{})
	switch {
	case res.Err != nil:
		fmt.Printf("%s: %s\n", res.Err.Name, res.Err.Value)
	case res.Value != nil:
		fmt.Println("=>", res.Value["text/plain"])
	}
}

func ExampleNew() {
	s, err := session.New(session.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	execute(s, "import \"fmt\"\nlr := 0.1\nfunc decay(v float64) float64 { return v * 0.5 }")
	execute(s, "lr = decay(lr)\nfmt.Printf(\"lr %.3f\\n\", lr)\nlr * 2")
	// Output:
	// lr 0.050
	// => 0.1
}

func ExampleSession_Execute() {
	s, _ := session.New(session.Options{})
	defer s.Close()
	// The final expression is the cell's result.
	execute(s, "total := 0\nfor i := range 5 {\n\ttotal += i\n}\nmin(total, 100)")
	// Errors carry the cell's own line and column.
	execute(s, "x := 1\n\ny := x + undefinedThing")
	execute(s, "func boom() {\n\tpanic(\"bad batch\")\n}\nboom()")
	// Output:
	// => 10
	// CompileError: line 3: undefined: undefinedThing
	// Panic: bad batch
}

func ExampleSession_Interrupt() {
	s, _ := session.New(session.Options{})
	defer s.Close()
	execute(s, "import \"time\"\nsteps := 0\nfunc train() {\n\tfor {\n\t\tsteps++\n\t\ttime.Sleep(time.Millisecond)\n\t}\n}")
	go func() {
		for !s.Running() {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		// Loops, function entries and time.Sleep in cells are safe points;
		// an interrupt while the cell still compiles stops the compile.
		s.Interrupt()
	}()
	execute(s, "train()")
	execute(s, "steps >= 0")
	// Output:
	// Interrupted: interrupted
	// => true
}

func ExampleSession_Complete() {
	s, _ := session.New(session.Options{})
	defer s.Close()
	execute(s, "import \"strings\"")
	c := s.Complete("strings.ToU", 11)
	fmt.Println(c.Matches, c.CursorStart, c.CursorEnd)
	// Output:
	// [ToUpper ToUpperSpecial] 8 11
}

func ExampleSession_Inspect() {
	s, _ := session.New(session.Options{})
	defer s.Close()
	execute(s, "import \"strings\"")
	r := s.Inspect("strings.Repeat(\"ab\", 3)", 10, 0)
	// The signature, a blank line, then the doc comment (read from the
	// Go installation's source; without it, the signature alone).
	sig, doc, _ := strings.Cut(r.Data["text/plain"].(string), "\n\n")
	first, _, _ := strings.Cut(doc, "\n")
	fmt.Println(r.Found, sig)
	fmt.Println(first)
	// Output:
	// true func strings.Repeat(s string, count int) string
	// Repeat returns a new string consisting of count copies of the string s.
}

func ExampleSession_IsComplete() {
	s, _ := session.New(session.Options{})
	defer s.Close()
	for _, code := range []string{"x := 1", "for i := range 3 {", "x := )"} {
		r := s.IsComplete(code)
		fmt.Printf("%-20q %s %q\n", code, r.Status, r.Indent)
	}
	// Output:
	// "x := 1"             complete ""
	// "for i := range 3 {" incomplete "\t"
	// "x := )"             invalid ""
}

// PackageDocs reads doc comments from a package's source; here the
// standard library's strings package, as inspection does for strings.ToUpper.
func ExamplePackageDocs() {
	root := os.Getenv("GOROOT")
	if root == "" {
		root = runtime.GOROOT()
	}
	docs, err := session.PackageDocs(filepath.Join(root, "src", "strings"), "strings")
	if err != nil {
		fmt.Println(err)
		return
	}
	first, _, _ := strings.Cut(docs["strings.ToUpper"], "\n")
	fmt.Println(first)
	_, hasUnexported := docs["strings.explode"]
	fmt.Println("unexported:", hasUnexported)
	// Output:
	// ToUpper returns s with all Unicode letters mapped to their upper case.
	// unexported: false
}
