"""Nothing left behind: a kernel whose front end dies exits, with its workers;
a kernel shut down normally leaves no session folder, and one that starts
removes those of dead sessions (issue 31).

A jupyter-console runs in a tmux session of its own tmux server; the test
kills the server, as closing a terminal does, and checks that within 5 s no
process of that console remains: not the kernel, its workers, nor mpirun and
its ranks (issue 24). jupyter_client starts the kernel in a session of its
own, so the terminal's SIGHUP never reaches it: the kernel notices that its
parent is gone.

The processes of one test are found by a variable of their environment that
only they carry; no other gotrain process on the machine is looked at.
Driven by Debian's jupyter-console against the installed gotrain kernelspec:
    JUPYTER_PATH=build/jupyter/share/jupyter /usr/bin/python3 -m unittest -v tests/jupyter/test_lifecycle.py
"""
import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid

TAG = "GOTRAIN_LIFECYCLE_TEST"
START_TIMEOUT = 90
GONE_WITHIN = 5.0


def tagged(tag):
    """The live processes whose environment has TAG=tag, as (pid, command)."""
    want = f"{TAG}={tag}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{name}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if want in env and state not in ("Z", "X"):
            found.append((int(name), cmd))
    return found


def commands(procs):
    return [cmd for _, cmd in procs]


@unittest.skipUnless(shutil.which("tmux"), "tmux is not installed (install/setup.sh installs it)")
@unittest.skipUnless(shutil.which("jupyter-console"), "jupyter-console is not installed (install/setup.sh installs it)")
class NothingLeftBehind(unittest.TestCase):
    def setUp(self):
        self.tag = uuid.uuid4().hex
        self.server = "gotrain-lifecycle-" + self.tag  # a tmux server of this test's own
        self.tmp = tempfile.mkdtemp(prefix="gotrain-lifecycle-")
        env = {
            TAG: self.tag,
            "JUPYTER_RUNTIME_DIR": os.path.join(self.tmp, "runtime"),
            "JUPYTER_DATA_DIR": os.path.join(self.tmp, "data"),
        }
        for name in ("JUPYTER_PATH", "PATH", "HOME"):
            if name in os.environ:
                env[name] = os.environ[name]
        command = ["env"] + [f"{k}={v}" for k, v in env.items()] + ["jupyter-console", "--kernel", "gotrain"]
        self.tmux("new-session", "-d", "-s", "console", "-x", "200", "-y", "50", shlex.join(command))

    def tearDown(self):
        self.tmux("kill-server", check=False)
        for pid, _ in tagged(self.tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tmux(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.server] + list(args), check=check,
                              capture_output=True, text=True, timeout=30).stdout

    def wait_for(self, what, ok, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ok():
                return
            time.sleep(0.2)
        self.fail(f"no {what} within {timeout} s; the console shows:\n{self.screen()}\nprocesses: {commands(tagged(self.tag))}")

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "console", check=False)

    def gotrain(self, role):
        """How many processes of this test run `gotrain ROLE`."""
        return sum(f"gotrain {role} " in cmd + " " for cmd in commands(tagged(self.tag)))

    def kill_terminal_and_check(self):
        before = tagged(self.tag)
        killed = time.monotonic()
        self.tmux("kill-server")
        while True:
            left = tagged(self.tag)
            if not left:
                return time.monotonic() - killed
            if time.monotonic() - killed > GONE_WITHIN:
                self.fail(f"{GONE_WITHIN} s after the terminal was killed, {commands(left)} remain (of {commands(before)})")
            time.sleep(0.05)

    def test_console_killed(self):
        self.wait_for("prompt", lambda: "In [1]:" in self.screen())
        self.wait_for("worker", lambda: self.gotrain("worker") == 1)
        self.assertEqual(self.gotrain("kernel"), 1, commands(tagged(self.tag)))
        took = self.kill_terminal_and_check()
        print(f"console killed: every process gone after {took:.2f} s")

    @unittest.skipUnless(shutil.which("mpirun"), "mpirun is not installed (install/setup.sh installs it)")
    def test_console_killed_with_mpi_workers(self):
        self.wait_for("prompt", lambda: "In [1]:" in self.screen())
        self.tmux("send-keys", "-t", "console", "%workers -np 2", "Enter")
        self.wait_for("workers under mpirun", lambda: "2 workers under mpirun" in self.screen())
        self.assertTrue(any(cmd.split()[0].endswith("mpirun") for cmd in commands(tagged(self.tag))),
                        commands(tagged(self.tag)))
        took = self.kill_terminal_and_check()
        print(f"console with mpirun's workers killed: every process gone after {took:.2f} s")


def owner(pid, start):
    """A session folder's owner file (session/dir.go) naming pid, started at start."""
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot = f.read().strip()
    return f"pid {pid}\nstart {start}\nboot {boot}\npidns {os.readlink('/proc/self/ns/pid')}\n"


def start_time(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[19]


class NoSessionFolderLeft(unittest.TestCase):
    """Each test starts a kernel whose temporary directory is a fresh folder
    of its own, so only its session folders are looked at."""

    def setUp(self):
        from jupyter_client.manager import start_new_kernel
        self.tmp = tempfile.mkdtemp(prefix="gotrain-lifecycle-tmp-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.start = lambda: start_new_kernel(kernel_name="gotrain", startup_timeout=60,
                                              env=dict(os.environ, TMPDIR=self.tmp))

    def sessions(self):
        return sorted(os.path.basename(d) for d in glob.glob(os.path.join(self.tmp, "gotrain-session-*")))

    def run_cell(self, kc, code):
        reply = kc.execute_interactive(code, timeout=START_TIMEOUT, output_hook=lambda m: None)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])

    def check_shutdown(self, workers):
        km, kc = self.start()
        try:
            if workers > 1:
                self.run_cell(kc, f"%workers {workers}")
            self.run_cell(kc, "x := 6 * 7\nx")
            self.assertEqual(len(self.sessions()), workers, self.sessions())
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=False)
        self.assertFalse(km.is_alive())
        left = [os.path.basename(p) for p in glob.glob(os.path.join(self.tmp, "gotrain-*"))]
        self.assertEqual(left, [], "left behind after a normal shutdown")

    def test_issue31_shutdown_one_worker(self):
        self.check_shutdown(1)

    def test_issue31_shutdown_two_workers(self):
        self.check_shutdown(2)

    def test_issue31_stale_session_swept(self):
        # A session folder of a process that has exited, and one of this
        # test's own process, which runs.
        dead = subprocess.Popen(["true"])
        dead.wait()
        for name, text in (("gotrain-session-dead", owner(dead.pid, "1")),
                           ("gotrain-session-live", owner(os.getpid(), start_time(os.getpid())))):
            os.makedirs(os.path.join(self.tmp, name, "cells"))
            with open(os.path.join(self.tmp, name, "owner"), "w") as f:
                f.write(text)
        km, kc = self.start()
        try:
            self.run_cell(kc, "1")
            sessions = self.sessions()
            self.assertNotIn("gotrain-session-dead", sessions)
            self.assertIn("gotrain-session-live", sessions)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=False)
        self.assertEqual(self.sessions(), ["gotrain-session-live"])


if __name__ == "__main__":
    unittest.main()
