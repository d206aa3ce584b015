"""The session lives in a worker process: a cell that kills its process costs an error, not the kernel.

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_worker.py
"""
import os
import signal
import subprocess
import time
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 60


class Worker(unittest.TestCase):
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

    def stream(self, reply, name="stdout"):
        return "".join(m["content"]["text"] for m in reply["outputs"]
                       if m["msg_type"] == "stream" and m["content"]["name"] == name)

    def result(self, reply):
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        results = [m["content"]["data"]["text/plain"] for m in reply["outputs"] if m["msg_type"] == "execute_result"]
        self.assertEqual(len(results), 1, reply["outputs"])
        return results[0]

    def test_crashes(self):
        cases = [
            ("stack overflow", "func inf(n int) int { return inf(n+1) + 1 }\ninf(0)", "stack overflow"),
            ("refused allocation", "b := make([]byte, 1<<40)\nb[0]", "out of memory"),
            ("os.Exit", 'import "os"\nos.Exit(3)', "exit status 3"),
            ("SIGKILL", 'import "os"\np, _ := os.FindProcess(os.Getpid())\np.Kill()', "SIGKILL"),
        ]
        for name, cell, want in cases:
            with self.subTest(name):
                self.assertEqual(self.result(self.run_cell("before := 41\nbefore + 1")), "42")
                # Queued behind the crash: sent before the crash is reported.
                started = time.monotonic()
                crash_id = self.kc.execute(cell, stop_on_error=False)
                queued_id = self.kc.execute("1 + 1", stop_on_error=False)
                complete_id = self.kc.complete("bef", 3)
                replies = {}
                while len(replies) < 3:
                    m = self.kc.get_shell_msg(timeout=TIMEOUT)
                    replies[m["parent_header"]["msg_id"]] = m
                crash = replies[crash_id]["content"]
                self.assertEqual(crash["status"], "error", crash)
                self.assertEqual(crash["ename"], "WorkerExited", crash)
                self.assertIn(want, crash["evalue"])
                self.assertLess(time.monotonic() - started, 5.0 + 5.0, "the crash took too long to report")
                self.assertEqual(replies[queued_id]["content"]["status"], "ok", replies[queued_id]["content"])
                self.assertEqual(replies[complete_id]["content"]["status"], "ok")
                # A variable defined after the crash works; the old one is gone.
                self.assertEqual(self.result(self.run_cell("after := 7\nafter * 6")), "42")
                gone = self.run_cell("before")
                self.assertEqual(gone["content"]["status"], "error")
                self.assertIn("undefined: before", gone["content"]["evalue"])

    def test_crash_error_within_5s(self):
        started = time.monotonic()
        reply = self.run_cell('import "os"\nos.Exit(3)')
        self.assertEqual(reply["content"]["ename"], "WorkerExited")
        self.assertLess(time.monotonic() - started, 5.0)
        # The next cell says once that the session was lost.
        reply = self.run_cell("1")
        self.assertIn("fresh session", self.stream(reply, "stderr"))
        reply = self.run_cell("2")
        self.assertNotIn("fresh session", self.stream(reply, "stderr"))

    def test_output_at_fd_level(self):
        reply = self.run_cell('import "os"\nos.Stdout.WriteString("direct\\n")\nos.Stderr.WriteString("to stderr\\n")')
        self.assertEqual(self.stream(reply), "direct\n")
        self.assertEqual(self.stream(reply, "stderr"), "to stderr\n")
        reply = self.run_cell("!echo from a shell; echo oops >&2")
        self.assertEqual(self.stream(reply), "from a shell\n")
        self.assertEqual(self.stream(reply, "stderr"), "oops\n")

    def test_goroutine_keeps_printing(self):
        reply = self.run_cell('import ("fmt"; "time")\nticked := make(chan bool)\n'
                              'go func() { for i := 0; i < 3; i++ { time.Sleep(150 * time.Millisecond); fmt.Println("tick", i) }; close(ticked) }()')
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertEqual(self.stream(reply), "")
        time.sleep(0.8)
        # What it printed after its cell ended shows in the next one, before its own output.
        reply = self.run_cell('<-ticked\nfmt.Println("next")')
        self.assertEqual(self.stream(reply), "tick 0\ntick 1\ntick 2\nnext\n")

    def test_many_lines_complete_and_in_order(self):
        n = 100000
        reply = self.run_cell('import "fmt"\nfor i := 0; i < %d; i++ { fmt.Println(i) }' % n, timeout=120)
        lines = self.stream(reply).splitlines()
        self.assertEqual(len(lines), n)
        self.assertEqual(lines, [str(i) for i in range(n)])

    def test_magics(self):
        reply = self.run_cell("%env GOTRAIN_T=1")
        self.assertEqual(self.stream(reply), "env: GOTRAIN_T=1\n")
        self.assertEqual(self.result(self.run_cell('import "os"\nos.Getenv("GOTRAIN_T")')), "1")
        reply = self.run_cell("%time\nx := 0\nfor i := 0; i < 1000; i++ { x += i }")
        self.assertIn("Wall time:", self.stream(reply))
        reply = self.run_cell("%nonesuch")
        self.assertEqual(reply["content"]["ename"], "UnknownMagic")
        self.assertIn("%reset", reply["content"]["evalue"])
        reply = self.run_cell("%go mod")
        self.assertIn("module gotrain.cells", self.stream(reply))
        self.assertIn("github.com/gotrain/gotrain", self.stream(reply))
        reply = self.run_cell("%go get gonum.org/v1/gonum@v0.16.0")
        self.assertEqual(reply["content"]["ename"], "GoGetError")
        self.assertIn("v0.17.0", reply["content"]["evalue"])
        reply = self.run_cell("!exit 4")
        self.assertEqual(reply["content"]["ename"], "ShellError")
        self.assertIn("exit status 4", reply["content"]["evalue"])
        self.run_cell("kept := 1")
        reply = self.run_cell("%reset")
        self.assertIn("reset", self.stream(reply))
        self.assertIn("undefined: kept", self.run_cell("kept")["content"]["evalue"])
        reply = self.run_cell("%help")
        shown = [m for m in reply["outputs"] if m["msg_type"] == "display_data"]
        self.assertTrue(shown and "%limit" in shown[0]["content"]["data"]["text/markdown"], reply["outputs"])

    def test_memory_limit(self):
        reply = self.run_cell("%limit memory 1GiB")
        self.assertIn("1GiB", self.stream(reply))
        reply = self.run_cell("b := make([]byte, 2<<30)\nfor i := range b { b[i] = 1 }")
        self.assertEqual(reply["content"]["ename"], "WorkerExited")
        self.assertIn("out of memory", reply["content"]["evalue"])
        # The fresh worker keeps the limit.
        self.assertIn("1GiB", self.stream(self.run_cell("%limit")))


class Orphan(unittest.TestCase):
    def test_worker_exits_when_kernel_is_killed(self):
        km, kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)
        try:
            kc.execute_interactive('import "os"\nos.Getpid()', timeout=TIMEOUT, output_hook=lambda m: None)
            out = subprocess.run(["pgrep", "-P", str(km.provisioner.pid), "-f", "gotrain worker"],
                                 capture_output=True, text=True).stdout.split()
            self.assertEqual(len(out), 1, "want one worker child of the kernel")
            worker = int(out[0])
            os.kill(km.provisioner.pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(worker, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.1)
            else:
                os.kill(worker, signal.SIGKILL)
                self.fail("the worker outlived its kernel by 10 s")
        finally:
            kc.stop_channels()
            km.cleanup_resources()


if __name__ == "__main__":
    unittest.main()
