"""A new cell costs the same at a session's 500th distinct cell as at its 20th, and keeps at most 1 MiB (issue 24).

Each cell of a session is a Go plugin, and a process cannot unload one; Go's
runtime as it ships makes each load walk every module loaded before, so that
a cell took 1.6 times as long at cell 500 as at cell 20. gotrain builds on the
runtime patched by install/goruntime (install/build.sh). The test runs 500
distinct cells `vN := x + N`, as the issue measured, and compares the median
round trip of the last 20 with that of the first 20, in one run; the figures
themselves go to the benchmark (scripts/cells_bench.py curve), not into the
assertion. The worker's
resident memory may grow by 1 MiB a cell between the 20th and the 500th:
each loaded plugin gives its code and read-only data back (cells/pageout.go).

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_cellcost.py
"""
import os
import statistics
import time
import unittest

from jupyter_client.manager import start_new_kernel

CELLS = 500
WINDOW = 20
MAX_RATIO = 1.3
MAX_MIB_PER_CELL = 1.0


def workers_rss_mib(kernel_pid):
    """The resident memory of the kernel's child processes (its worker), MiB."""
    total = 0
    for task in os.listdir(f"/proc/{kernel_pid}/task"):  # a Go program starts children from any thread
        with open(f"/proc/{kernel_pid}/task/{task}/children") as f:
            for pid in f.read().split():
                with open(f"/proc/{pid}/status") as st:
                    total += sum(int(l.split()[1]) for l in st if l.startswith("VmRSS:"))
    return total / 1024


class CellCost(unittest.TestCase):
    def setUp(self):
        self.km, self.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)

    def tearDown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def test_flat_at_500_cells(self):
        self.assertEqual(self.kc.execute_interactive("x := 1", timeout=120)["content"]["status"], "ok")
        times = []
        for i in range(1, CELLS + 1):
            t0 = time.perf_counter()
            reply = self.kc.execute_interactive(f"v{i} := x + {i}", timeout=120, output_hook=lambda m: None)
            times.append(time.perf_counter() - t0)
            self.assertEqual(reply["content"]["status"], "ok", (i, reply["content"]))
            if i == WINDOW:
                rss_first = workers_rss_mib(self.km.provisioner.process.pid)
        per_cell = (workers_rss_mib(self.km.provisioner.process.pid) - rss_first) / (CELLS - WINDOW)
        first = statistics.median(times[:WINDOW])
        last = statistics.median(times[-WINDOW:])
        print(f"\nnew-cell latency p50: cells 1-{WINDOW} {first * 1000:.0f} ms, "
              f"cells {CELLS - WINDOW + 1}-{CELLS} {last * 1000:.0f} ms ({last / first:.2f}x); "
              f"the worker's resident memory {per_cell:.2f} MiB per cell")
        self.assertLessEqual(per_cell, MAX_MIB_PER_CELL,
                             f"the worker kept {per_cell:.2f} MiB per distinct cell; at most {MAX_MIB_PER_CELL}")
        self.assertLessEqual(last / first, MAX_RATIO,
                             f"a new cell took {last / first:.2f} times as long at cell {CELLS} as at cell {WINDOW} "
                             f"({last * 1000:.0f} ms against {first * 1000:.0f} ms); at most {MAX_RATIO}")


if __name__ == "__main__":
    unittest.main()
