"""Two hosts (tests/twohost/run.sh makes them): %workers -np 2 --hostfile puts one
worker on each, and the quick start trains to the weights one process gets.

Run by tests/twohost/run.sh, inside the first host's namespaces."""
import os
import re
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "jupyter"))
from test_workers import TRAIN, KernelCase  # noqa: E402

# The quick start's optimizer; then every weight, one line a variable.
QUICKSTART = TRAIN.replace("nn.NewSGD(0.1)", "nn.NewAdam(0.001)") + """
for _, v := range model.TrainableVariables() {
    fmt.Println("weights", v.Name(), v.Value())
}
"""


def weights(text):
    out = {}
    for name, vals in re.findall(r"^weights (\S+) \[([^\]]*)\]$", text, re.M):
        out[name] = [float(x) for x in vals.split()]
    return out


class TwoHosts(KernelCase):
    def test_one_worker_per_host_trains_as_one_process(self):
        hosts = os.environ["GOTRAIN_HOSTS"].split()
        want = weights(self.ok(self.run_cell(QUICKSTART.replace("STRATEGY", "strategy.NewMirrored(strategy.WithReplicas(2))"))))
        self.assertEqual(len(want), 4)

        hostfile = os.environ["GOTRAIN_HOSTFILE"]
        self.assertIn(f"2 workers under mpirun on the hosts of {hostfile}",
                      self.ok(self.run_cell(f"%workers -np 2 --hostfile {hostfile}")))
        # Each worker says where it runs, in a file (the hosts share it).
        folder = os.environ["GOTRAIN_TWOHOST_DIR"]
        self.ok(self.run_cell(f'import ("fmt"; "os"; "github.com/gotrain/gotrain/strategy")\n'
                              f'w := strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))\n'
                              f'h, _ := os.Hostname()\n'
                              f'os.WriteFile(fmt.Sprintf("{folder}/host-%d", w.WorkerID()), []byte(h), 0o644)'))
        for rank, host in enumerate(hosts):
            with open(os.path.join(folder, f"host-{rank}")) as f:
                self.assertEqual(f.read(), host, f"worker {rank}'s host")

        text = self.ok(self.run_cell(QUICKSTART.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))")))
        self.assertIn("2 replicas in sync", text)
        got = weights(text)
        self.assertEqual(sorted(got), sorted(want))
        for name in want:
            self.assertEqual(len(got[name]), len(want[name]), name)
            scale = max(abs(x) for x in want[name]) or 1
            worst = max(abs(g - w) for g, w in zip(got[name], want[name])) / scale
            self.assertLess(worst, 1e-5, f"{name}: largest difference {worst:.2e} of the largest weight")
            print(f"{name}: largest difference {worst:.2e} of the largest weight", file=sys.stderr)

    def test_a_host_lost_mid_training(self):
        hostfile = os.environ["GOTRAIN_HOSTFILE"]
        self.ok(self.run_cell(f"%workers -np 2 --hostfile {hostfile}"))
        self.ok(self.run_cell(QUICKSTART.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))")))
        msg_id = self.kc.execute('runs := 0\nfor it := dist.Iter(); ; {\n if !it.Next() { it = dist.Iter(); continue }\n'
                                 ' s.Run(trainStep, it.Batch())\n runs++\n if runs == 20 { fmt.Println("running") }\n}')
        while True:
            m = self.kc.get_iopub_msg(timeout=120)
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream" and "running" in m["content"]["text"]:
                break
        # The second host's only link goes down: its worker and its
        # daemon are cut off, and nothing on either side ends.
        link = os.environ["GOTRAIN_TWOHOST_LINK"].split()
        subprocess.run(["ip", "-n", link[0], "link", "set", link[1], "down"], check=True)
        cut = time.monotonic()
        try:
            reply = self.kc.get_shell_msg(timeout=60)
            took = time.monotonic() - cut
            c = reply["content"]
            self.assertEqual(c["ename"], "WorkerLost", c)
            self.assertIn("worker 1 of 2", c["evalue"])
            self.assertIn("answered no ping", c["evalue"])
            self.assertLess(took, 10)
            print(f"host lost: WorkerLost {took:.1f} s after the link went down", file=sys.stderr)
            stopped = self.run_cell("1 + 1")["content"]
            self.assertEqual(stopped["ename"], "WorkersStopped", stopped)
        finally:
            subprocess.run(["ip", "-n", link[0], "link", "set", link[1], "up"], check=True)
        self.assertIn("under mpirun", self.ok(self.run_cell("%workers restart")))
        self.assertIn("2 replicas in sync", self.ok(self.run_cell(
            QUICKSTART.replace("STRATEGY", "strategy.NewMultiWorkerMirrored(strategy.WithReplicas(1))"))))


if __name__ == "__main__":
    unittest.main()
