//go:build ignore

// genextract writes the symbol table of each package named on its command
// line (github_com-gotrain-gotrain-nn.go for .../nn), in the form yaegi's
// Use takes. It does what `yaegi extract -name symbols` does; the yaegi
// command itself is not in the trimmed copy of yaegi under third_party.
package main

import (
	"bytes"
	"log"
	"os"
	"strings"

	"github.com/traefik/yaegi/extract"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("genextract: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: go run genextract.go IMPORT_PATH...")
	}
	ext := extract.Extractor{Dest: "symbols"}
	file := strings.NewReplacer("/", "-", ".", "_", "~", "_")
	for _, pkg := range os.Args[1:] {
		var b bytes.Buffer
		path, err := ext.Extract(pkg, "symbols", &b)
		if err != nil {
			log.Fatalf("%s: %v", pkg, err)
		}
		if err := os.WriteFile(file.Replace(path)+".go", b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
