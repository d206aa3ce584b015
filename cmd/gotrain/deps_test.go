package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKernelDoesNotLinkGorgonia: gorgonia is in gotrain's go.mod for package
// gorgoniamodel, which cells import and build; the kernel and worker binary must not
// link it (issue 16: the binary does not grow when no cell imports the
// bridge).
func TestKernelDoesNotLinkGorgonia(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "gorgonia.org/") || pkg == "github.com/gotrain/gotrain/gorgoniamodel" {
			t.Errorf("the gotrain binary links %s", pkg)
		}
	}
}
