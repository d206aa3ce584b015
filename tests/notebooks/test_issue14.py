"""Issue 14's notebook-visible pitfalls, run headless under nbconvert: each error shows in its cell,
naming what happened, and the session trains on afterwards.

    /usr/bin/python3 -m unittest -v tests/notebooks/test_issue14.py
"""
import json
import os
import subprocess
import tempfile
import threading
import unittest

SETUP = '''import (
    "fmt"
    "math"

    "github.com/gotrain/gotrain/data"
    "github.com/gotrain/gotrain/nn"
    "github.com/gotrain/gotrain/strategy"
)
s := strategy.NewMirrored(strategy.WithReplicas(2))
x := data.RandomNormal(7, 256, 10)
y := data.RandomInts(8, 2, 256)
dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(64))
var model *nn.Sequential
var opt *nn.SGD
s.Scope(func() {
    model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
    opt = nn.NewSGD(0.1)
})
lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
stepFn := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
    loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 64)
    opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
    return loss
}
epoch := func() float64 {
    total := 0.0
    for it := dist.Iter(); it.Next(); {
        total += s.Reduce(strategy.Sum, s.Run(stepFn, it.Batch())).Scalar()
    }
    return total
}
fmt.Println("setup done")'''

CELLS = [
    SETUP,
    # 1: the plain global batch, not distributed.
    's.Run(stepFn, x.Slice(0, 64), y.Slice(0, 64))',
    'fmt.Printf("trains on: %.3f\\n", epoch())',
    # 2: TensorFlow's step_fn inside train_step (a new closure at every call) traces once, over 8 steps.
    '''before := s.Traces()
trainStep := func(b *strategy.PerReplicaBatch) strategy.PerReplica {
    inner := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) []*nn.Tensor {
        loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 64)
        opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
        return []*nn.Tensor{loss}
    }
    return s.Run(inner, b)
}
for k := 0; k < 2; k++ {
    for it := dist.Iter(); it.Next(); {
        trainStep(it.Batch())
    }
}
fmt.Println("new traces:", s.Traces()-before)''',
    # 3: a learning rate set to NaN between steps.
    'opt.LR = math.NaN()\nepoch()',
    'opt.LR = 0.1\nfmt.Printf("trains on: %.3f\\n", epoch())',
    # 4: eager prediction.
    'fmt.Println("predicted:", model.Predict(x).Shape)',
    # 5: a retrace for new shapes warns in the cell.
    'it := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(32)).Iter()\nit.Next()\ns.Run(stepFn, it.Batch())\nit.Close()\nfmt.Println("ran")',
]


def run_notebook():
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                   "source": src} for i, src in enumerate(CELLS)],
        "metadata": {"kernelspec": {"display_name": "Go (gotrain)", "language": "go", "name": "gotrain"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    d = tempfile.mkdtemp(prefix="gotrain-issue14-")
    path = os.path.join(d, "issue14.ipynb")
    with open(path, "w") as f:
        json.dump(nb, f)
    subprocess.run(
        ["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
         "--ExecutePreprocessor.kernel_name=gotrain", "--ExecutePreprocessor.timeout=300",
         "--output-dir", os.path.join(d, "out"), path],
        check=True, cwd=d)
    with open(os.path.join(d, "out", "issue14.ipynb")) as f:
        return json.load(f)["cells"]


def texts(cell):
    out = []
    for o in cell["outputs"]:
        if o["output_type"] == "error":
            out.append(o["ename"] + ": " + o["evalue"])
        elif o["output_type"] == "stream":
            out.append("".join(o["text"]))
        else:
            t = o.get("data", {}).get("text/plain", "")
            out.append("".join(t) if isinstance(t, list) else t)
    return "".join(out)


def errors(cell):
    return [o for o in cell["outputs"] if o["output_type"] == "error"]


class Issue14(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cells = run_notebook()

    def test_setup(self):
        self.assertIn("setup done", texts(self.cells[0]))

    def test_undistributed_batch_is_an_error_in_the_cell(self):
        self.assertTrue(errors(self.cells[1]), texts(self.cells[1]))
        self.assertIn("is not distributed", texts(self.cells[1]))
        self.assertIn("s.Broadcast", texts(self.cells[1]))
        self.assertIn("trains on:", texts(self.cells[2]))
        self.assertFalse(errors(self.cells[2]))

    def test_nested_step_function_traces_once(self):
        self.assertIn("new traces: 1", texts(self.cells[3]))

    def test_nan_learning_rate_is_an_error_and_training_goes_on(self):
        self.assertTrue(errors(self.cells[4]), texts(self.cells[4]))
        self.assertIn("LR: want a finite lr", texts(self.cells[4]))
        self.assertIn("trains on:", texts(self.cells[5]))
        self.assertNotIn("NaN", texts(self.cells[5]))

    def test_predict(self):
        self.assertIn("predicted: [256 2]", texts(self.cells[6]))

    def test_retrace_warning_in_the_cell(self):
        self.assertIn("strategy: warning: retracing the step function: its input shapes changed", texts(self.cells[7]))
        self.assertIn("ran", texts(self.cells[7]))


if __name__ == "__main__":
    unittest.main()


class Console(unittest.TestCase):
    """Item 9: jupyter-console ignores update_display_data, so the monitor's display stays at its first state;
    Done prints the final progress line, which the console shows."""

    def test_monitor_final_state_in_jupyter_console(self):
        cell = ('import ("github.com/gotrain/gotrain/display"; "time"); '
                'm := display.NewMonitor(display.Title("demo"), display.Total(40)); '
                'for i := 1; i <= 40; i++ { m.Add(i, map[string]float64{"loss": 1/float64(i)}); time.Sleep(5*time.Millisecond) }; '
                'm.Done(); println("cell done")\n')
        p = subprocess.Popen(["/usr/bin/python3", "-m", "jupyter_console", "--kernel", "gotrain", "--simple-prompt"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        watchdog = threading.Timer(120, p.kill)  # a console that never prints ends the read loop
        watchdog.start()
        try:
            p.stdin.write(cell)
            p.stdin.flush()
            out = []
            # Read until the cell has finished (its stderr line), then quit.
            while True:
                line = p.stdout.readline()
                self.assertNotEqual(line, "", "jupyter-console ended early: " + "".join(out))
                out.append(line)
                if "cell done" in line:
                    break
            p.stdin.write("quit\ny\n")
            p.stdin.close()
            p.wait(timeout=60)
        finally:
            watchdog.cancel()
            if p.poll() is None:
                p.kill()
        text = "".join(out)
        self.assertIn("demo: step 1/40", text)  # the display, never updated in a console
        self.assertRegex(text, r"demo: step 40/40  loss 0\.0250")  # Done's line
