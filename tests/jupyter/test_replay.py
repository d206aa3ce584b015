"""%replay rebuilds a session after its worker died (issue 24): the quick start's weights after the replay equal,
bit for bit, those before the crash, for each way a worker dies (a runaway recursion, an allocation the system
refuses, os.Exit). Issue 35: a cell that failed after it ran is replayed and fails the same way; a replay that
stops keeps what it did not run; a goroutine's panic names its cell and line.

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_replay.py
"""
import json
import os
import shutil
import tempfile
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 120
REPLAY_TIMEOUT = 600  # a replay compiles and runs every cell of the session again, in a fresh worker
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

    def run_cell(self, code, stream="stdout", timeout=TIMEOUT):
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append)
        text = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == stream)
        return reply["content"], text

    def ok(self, code, stream="stdout", timeout=TIMEOUT):
        content, text = self.run_cell(code, stream, timeout)
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


    def test_issue35_session_with_mishaps(self):
        """The issue's session: training, a cell whose replica panics after it declared a step and advanced the
        iterator, TryRun, more training; then each way a worker dies, followed by %replay, gives back the
        optimizer's step counter, the weights bit for bit, a closure's count and the random state."""
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder)
        path = os.path.join(folder, "data.txt")
        with open(path, "w") as f:
            f.write("rows 1024\n")
        self.ok('''import (
    "fmt"
    "math/rand/v2"
    "os"

    "github.com/gotrain/gotrain/data"
    "github.com/gotrain/gotrain/nn"
    "github.com/gotrain/gotrain/strategy"
)''')
        self.ok('''s := strategy.NewMirrored(strategy.WithReplicas(2))
const GlobalBatchSize = 64
features := data.RandomNormal(7, 1024, 10)
labels := data.RandomInts(8, 2, 1024)
dist := s.DistributeDataset(data.FromTensorSlices(features, labels).Batch(GlobalBatchSize))
var model *nn.Sequential
var opt nn.Optimizer
s.Scope(func() {
    model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
    opt = nn.NewAdam(0.001)
})
lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
it := dist.Iter()
pcg := rand.NewPCG(1, 2)
rng := rand.New(pcg)''')
        # The cell that reads a file; its execution count names it when a replay stops there.
        content, _ = self.run_cell('raw, readErr := os.ReadFile(%s)\nif readErr != nil {\n    panic(readErr)\n}\nfmt.Println(len(raw))' % json.dumps(path))
        self.assertEqual(content["status"], "ok", content)
        file_cell = content["execution_count"]
        self.ok('''trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
    logits := model.Call(ctx, x, true)
    loss := nn.ComputeAverageLoss(lossObj.Call(y, logits), GlobalBatchSize)
    opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
    return loss
}
noise := 0
train := func(n int) {
    for i := 0; i < n && it.Next(); i++ {
        s.Run(trainStep, it.Batch())
        noise += rng.IntN(1000)
    }
}
train(5)
fmt.Println("iterations", opt.Iterations())''')
        content, _ = self.run_cell('''panicky := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
    if ctx.ReplicaID() == 1 {
        panic("replica one fails")
    }
    return trainStep(ctx, x, y)
}
it.Next()
s.Run(panicky, it.Batch())''')
        self.assertEqual(content.get("ename"), "Panic", content)
        self.assertIn("replica one fails", content["evalue"])
        panicky_cell = content["execution_count"]
        self.assertIn("true", self.ok("_, err := s.TryRun(panicky, it.Batch())\nfmt.Println(err != nil, err)"))
        self.ok("train(1)")
        self.ok("train(1)")
        self.assertIn("iterations 7", self.ok('''import (
    "crypto/sha256"
    "encoding/binary"
)
state := func() string {
    h := sha256.New()
    for _, v := range model.Variables() {
        for _, f := range v.F32() {
            binary.Write(h, binary.LittleEndian, f)
        }
    }
    rs, _ := pcg.MarshalBinary()
    return fmt.Sprintf("iterations %d weights %x noise %d rng %x", opt.Iterations(), h.Sum(nil), noise, rs)
}
fmt.Println(state())'''))
        before = self.ok("fmt.Println(state())").strip()
        self.assertTrue(before.startswith("iterations 7 weights "), before)

        def replay_gives_back(name):
            text = self.ok("%replay", timeout=REPLAY_TIMEOUT)
            self.assertIn("gotrain: replaying the session of the worker that died in cell", text)
            self.assertIn("[%d] (which failed: Panic, line 8)" % panicky_cell, text)
            self.assertIn("gotrain: cell [%d] failed as it did the first time (Panic at line 8" % panicky_cell, text)
            self.assertEqual(self.ok("fmt.Println(state())").strip(), before, "the state after %replay following " + name)

        crashes = [
            ("os.Exit", "os.Exit(1)"),
            ("log.Fatal", 'import "log"\nlog.Fatal("a fatal cell")'),
            ("os.Exit in a goroutine", 'import "time"\ngo func() { os.Exit(2) }()\ntime.Sleep(20 * time.Second)'),
            ("runaway recursion", "func inf(n int) int { return inf(n+1) + 1 }\ninf(0)"),
            ("refused allocation", "b := make([]byte, 1<<40)\nb[0]"),
        ]
        for name, crash in crashes:
            with self.subTest(name):
                content, _ = self.run_cell(crash)
                self.assertEqual(content.get("ename"), "WorkerExited", content)
                self.assertIn("%replay re-runs the", "\n".join(content["traceback"]))
                replay_gives_back(name)

        with self.subTest("a replayed cell's file is gone"):
            content, _ = self.run_cell("os.Exit(3)")
            self.assertEqual(content.get("ename"), "WorkerExited", content)
            os.rename(path, path + ".away")
            content, _ = self.run_cell("%replay", timeout=REPLAY_TIMEOUT)
            self.assertEqual(content["status"], "error", content)
            self.assertIn("%%replay: cell [%d] failed: " % file_cell, content["evalue"])
            self.assertIn("no such file or directory", content["evalue"])
            self.assertIn("%%replay stopped at cell [%d]; it and the cells after it stay in the journal" % file_cell,
                          "\n".join(content["traceback"]))
            os.rename(path + ".away", path)
            text = self.ok("%replay", timeout=REPLAY_TIMEOUT)
            self.assertIn("gotrain: replaying the rest of the session of the worker that died in cell", text)
            self.assertEqual(self.ok("fmt.Println(state())").strip(), before, "the state after the resumed %replay")
            # And the journal is whole again: one more death and %replay give it all back.
            content, _ = self.run_cell("os.Exit(4)")
            self.assertEqual(content.get("ename"), "WorkerExited", content)
            replay_gives_back("a resumed replay")

    def test_issue35_goroutine_panic_names_cell_and_line(self):
        content, _ = self.run_cell('import "time"\nfunc boom(n int) {\n\tif n > 0 {\n\t\tpanic("late boom")\n\t}\n}')
        self.assertEqual(content["status"], "ok", content)
        declared = content["execution_count"]
        content, _ = self.run_cell("x := 1\ngo func() {\n\ttime.Sleep(200 * time.Millisecond)\n\tboom(x)\n}()")
        self.assertEqual(content["status"], "ok", content)
        started = content["execution_count"]
        notes = self.ok("time.Sleep(time.Second)", stream="stderr") + self.ok("1 + 1", stream="stderr")
        self.assertIn("panic in a goroutine (it ended; the session goes on): late boom\n"
                      "  at cell [%d], line 4 (in main.boom); the goroutine was started at cell [%d], line 2"
                      % (declared, started), notes)


if __name__ == "__main__":
    unittest.main()
