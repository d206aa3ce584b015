"""%replay rebuilds a session after its worker died (issue 24): the quick start's weights after the replay equal,
bit for bit, those before the crash, for each way a worker dies (a runaway recursion, an allocation the system
refuses, os.Exit).

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_replay.py
"""
import json
import os
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 120
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")

# The weights' SHA-256, as raw float bits: equal digests are equal weights.
DIGEST = '''import (
    "crypto/sha256"
    "encoding/binary"
)
digest := func() string {
    h := sha256.New()
    for _, v := range model.Variables() {
        for _, f := range v.F32() {
            binary.Write(h, binary.LittleEndian, f)
        }
    }
    return fmt.Sprintf("%x", h.Sum(nil))
}
fmt.Println("weights", digest())'''


class Replay(unittest.TestCase):
    def setUp(self):
        self.km, self.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)

    def tearDown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def run_cell(self, code):
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=TIMEOUT, output_hook=outputs.append)
        text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")
        return reply["content"], text

    def ok(self, code):
        content, text = self.run_cell(code)
        self.assertEqual(content["status"], "ok", (code, content))
        return text

    def test_quickstart_weights_after_replay(self):
        with open(os.path.join(ROOT, "notebooks", "01-quickstart.ipynb")) as f:
            cells = ["".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "code"]
        for code in cells:
            self.ok(code)
        before = self.ok(DIGEST).split()[-1]
        crashes = [
            ("runaway recursion", "func inf(n int) int { return inf(n+1) + 1 }\ninf(0)"),
            ("refused allocation", "b := make([]byte, 1<<40)\nb[0]"),
            ("os.Exit", 'import "os"\nos.Exit(3)'),
        ]
        for name, crash in crashes:
            with self.subTest(name):
                content, _ = self.run_cell(crash)
                self.assertEqual(content.get("ename"), "WorkerExited", content)
                self.assertIn("%replay re-runs the", "\n".join(content["traceback"]))
                text = self.ok("%replay")
                self.assertIn("gotrain: replaying the session of the worker that died in cell", text)
                self.assertEqual(text.split("weights ")[-1].split()[0], before, "the replayed session's weights")
                # The replayed variables are the session's: the next cell sees them.
                self.assertEqual(self.ok('fmt.Println("weights", digest())').split()[-1], before)


if __name__ == "__main__":
    unittest.main()
