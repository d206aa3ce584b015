"""Jupyter conformance: Debian's jupyter_kernel_test suite run against gotrain.

Run with Debian's Python, with JUPYTER_PATH naming the folder the freshly built
kernelspec was installed into (scripts/test.sh does both):
    /usr/bin/python3 -m unittest -v tests/jupyter/test_conformance.py
"""
import unittest

import jupyter_kernel_test


class GotrainConformance(jupyter_kernel_test.KernelTests):
    kernel_name = "gotrain"
    language_name = "go"
    file_extension = ".go"

    code_hello_world = 'import "fmt"\nfmt.Println("hello, world")'
    code_stderr = 'import (\n\t"fmt"\n\t"os"\n)\nfmt.Fprintln(os.Stderr, "to stderr")'

    completion_samples = [
        # Members complete from the dot on, as the reply's cursor_start says.
        {"text": "import \"strings\"\nstrings.ToUpp", "matches": ["ToUpper", "ToUpperSpecial"]},
        {"text": "zebraCount := 3\nzebraC", "matches": ["zebraCount"]},
    ]

    complete_code_samples = ["1 + 1", "x := 2", "func f() int { return 1 }", "import \"fmt\""]
    incomplete_code_samples = ["func f() {", "for i := 0; i < 3; i++ {", "x := []int{1,\n2,", "s := `abc"]
    invalid_code_samples = ["x := )", "}", "func )"]

    code_page_something = "?fmt.Println"
    code_generate_error = "undefinedName + 1"

    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": "x := 3\nx * x", "result": "9"},
        # Strings read as their text, as fmt.Println prints them.
        {"code": "\"go\" + \"train\"", "result": "gotrain"},
        {"code": "[]int{1, 2, 3}", "result": "[1 2 3]"},
    ]
    code_display_data = [
        {"code": 'import "github.com/gotrain/gotrain/display"\ndisplay.Show(display.HTML("<b>hi</b>"))',
         "mime": "text/html"},
        {"code": 'import "github.com/gotrain/gotrain/display"\ndisplay.Show(display.Markdown("# hi"))',
         "mime": "text/markdown"},
    ]
    code_history_pattern = "6 * 7"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "fmt.Println"
    code_clear_output = 'import "github.com/gotrain/gotrain/display"\ndisplay.Clear(false)'


if __name__ == "__main__":
    unittest.main()
