"""%workers: every cell on N worker processes of one strategy.NewMultiWorkerMirrored,
joined by a loopback cluster (%workers N) or started by mpirun (%workers -np N).

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_workers.py
"""
import json
import os
import re
import tempfile
import time
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 120

# The quick start's model on 256 random examples, trained for two epochs;
# STRATEGY is replaced by the strategy to train on. It prints each step's
# reduced loss with 6 decimals.
TRAIN = """
import (
    "fmt"

    "github.com/gotrain/gotrain/data"
    "github.com/gotrain/gotrain/nn"
    "github.com/gotrain/gotrain/strategy"
)
s := STRATEGY
x := data.RandomNormal(1, 256, 10)
y := data.RandomInts(2, 2, 256)
dist := s.DistributeDataset(data.FromTensorSlices(x, y).Batch(64))
var model *nn.Sequential
var opt nn.Optimizer
s.Scope(func() {
    model = nn.NewSequential(nn.Dense(16, nn.ReLU), nn.Dense(2))
    opt = nn.NewSGD(0.1)
})
lossObj := nn.SparseCategoricalCrossentropy{FromLogits: true, Reduction: nn.ReductionNone}
trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {
    loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), 64)
    opt.ApplyGradients(ctx, ctx.Gradients(loss, model.TrainableVariables()))
    return loss
}
step := 0
for epoch := 0; epoch < 2; epoch++ {
    for it := dist.Iter(); it.Next(); {
        step++
        loss := s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch()))
        fmt.Printf("step %d: loss %.6f\\n", step, loss.Scalar())
    }
}
fmt.Println(s.NumReplicasInSync(), "replicas in sync")
"""

# One more epoch of TRAIN's loop, printing each step's loss.
EPOCH = """for it := dist.Iter(); it.Next(); {
    step++
    fmt.Printf("step %d: loss %.6f\\n", step, s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch())).Scalar())
}"""


class KernelCase(unittest.TestCase):
    """A fresh gotrain kernel per test, and helpers to run cells on it."""

    def setUp(self):
        self.km, self.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)

    def tearDown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def run_cell(self, code, timeout=TIMEOUT):
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append)
        reply["outputs"] = outputs
        return reply

    def stdout(self, reply):
        return "".join(m["content"]["text"] for m in reply["outputs"]
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")

    def ok(self, reply):
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        return self.stdout(reply)

    def losses(self, text):
        return [float(l) for l in re.findall(r"step \d+: loss (\d+\.\d+)", text)]


class Workers(KernelCase):
    # The magic that starts 2 workers.
    START = "%workers 2"

    def test_two_workers_train_as_one_process(self):
        # One process with 2 replicas: the reference.
        want = self.losses(self.ok(self.run_cell(TRAIN.replace("STRATEGY", "strategy.NewMirrored(strategy.WithReplicas(2))"))))
        self.assertEqual(len(want), 8)
        self.assertIn("2 workers", self.ok(self.run_cell(self.START)))
        # 2 workers of 1 replica each: worker 0's output alone, the same losses.
        text = self.ok(self.run_cell(TRAIN.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))")))
        got = self.losses(text)
        self.assertEqual(len(got), 8, text)
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-5)
        self.assertIn("2 replicas in sync", text)
        self.assertIn("worker 0 of 2", self.ok(self.run_cell("fmt.Println(s)")))
        # The session goes on across cells, on both workers.
        self.assertIn("step 9: loss", self.ok(self.run_cell(
            "for it := dist.Iter(); it.Next(); {\n step++\n fmt.Printf(\"step %d: loss %.6f\\n\", step, s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch())).Scalar())\n}")))

    def test_a_worker_that_fails_alone(self):
        self.ok(self.run_cell(self.START))
        self.ok(self.run_cell('import ("fmt"; "github.com/gotrain/gotrain/strategy")\ns := strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))'))
        reply = self.run_cell('fmt.Println("on every worker")\nif s.WorkerID() == 1 { panic("only on worker 1") }')
        c = reply["content"]
        self.assertEqual(c["status"], "error")
        self.assertEqual(c["ename"], "Diverged")
        self.assertIn("worker 1 failed", c["evalue"])
        self.assertIn("only on worker 1", c["evalue"])
        self.assertIn("on every worker", "\n".join(c["traceback"]))

    def test_a_worker_killed_mid_training(self):
        self.ok(self.run_cell(self.START))
        self.ok(self.run_cell(TRAIN.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))")))
        tmp = tempfile.mkdtemp()
        ckpt, killed_at = os.path.join(tmp, "model.ckpt"), os.path.join(tmp, "killed")
        go_ckpt, go_killed = json.dumps(ckpt), json.dumps(killed_at)  # as Go string literals
        # A checkpoint, then one more epoch: the losses a restore must give.
        want = self.losses(self.ok(self.run_cell(f"if err := nn.SaveCheckpoint({go_ckpt}, s); err != nil {{ panic(err) }}\n" + EPOCH)))
        self.assertEqual(len(want), 4)
        reply = self.run_cell(f"""
import ("os"; "syscall"; "time")
for i := 0; i < 1000000; i++ {{
    if i == 20 && s.WorkerID() == 1 {{
        os.WriteFile({go_killed}, []byte(time.Now().Format(time.RFC3339Nano)), 0o644)
        syscall.Kill(os.Getpid(), syscall.SIGKILL)
    }}
    for it := dist.Iter(); it.Next(); {{
        s.Run(trainStep, it.Batch())
    }}
}}""")
        ended = time.time()
        c = reply["content"]
        self.assertEqual(c["status"], "error", c)
        self.assertEqual(c["ename"], "WorkerLost", c)
        self.assertIn("worker 1 of 2", c["evalue"])
        self.assertLess(ended - os.path.getmtime(killed_at), 10, c["evalue"])
        # The kernel answers; the workers are stopped until a restart.
        stopped = self.run_cell("1 + 1")["content"]
        self.assertEqual(stopped["ename"], "WorkersStopped", stopped)
        self.assertIn("2 workers", self.ok(self.run_cell("%workers restart")))
        # The model again, untrained; the checkpoint; the same epoch.
        self.ok(self.run_cell(TRAIN.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))").replace("epoch < 2", "epoch < 0") + "\ns.Scope(func() { model.Build([]int{64, 10}) })"))
        got = self.losses(self.ok(self.run_cell(f"if err := nn.RestoreCheckpoint({go_ckpt}, s); err != nil {{ panic(err) }}\n" + EPOCH)))
        self.assertEqual(len(got), 4)
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=1e-6)

    def test_interrupt_stops_every_worker_at_one_step(self):
        self.ok(self.run_cell(self.START))
        self.ok(self.run_cell(TRAIN.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))")))
        msg_id = self.kc.execute('runs := 0\nfor it := dist.Iter(); ; {\n if !it.Next() { it = dist.Iter(); continue }\n s.Run(trainStep, it.Batch())\n runs++\n if runs == 50 { fmt.Println("running") }\n}')
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            m = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream" and "running" in m["content"]["text"]:
                break
        self.km.interrupt_kernel()
        reply = self.kc.get_shell_msg(timeout=TIMEOUT)
        self.assertEqual(reply["content"]["status"], "error")
        self.assertEqual(reply["content"]["ename"], "Interrupted", reply["content"])
        # Both stopped at the same Run: the sum of every replica's count is
        # 2 × worker 0's.
        text = self.ok(self.run_cell('fmt.Println(s.Reduce(strategy.Sum, s.Broadcast(data.Tensor{Data: []float64{float64(runs)}})).Scalar() == float64(2*runs), runs > 50)'))
        self.assertIn("true true", text)


class MPIWorkers(Workers):
    """The same, with the workers started by mpirun and reducing through MPI."""
    START = "%workers -np 2"

    def test_status_says_mpirun(self):
        self.assertIn("2 workers under mpirun on this machine", self.ok(self.run_cell(self.START)))
        self.assertIn("under mpirun", self.ok(self.run_cell("%workers status")))
        # A spec that cannot start is refused before the workers stop.
        c = self.run_cell("%workers -np 2 --hostfile /nonexistent/hosts")["content"]
        self.assertEqual(c["ename"], "WorkersFailed", c)
        self.assertIn("/nonexistent/hosts", c["evalue"])
        self.assertIn("under mpirun", self.ok(self.run_cell("%workers status")))


if __name__ == "__main__":
    unittest.main()
