"""One bad client on the wire never freezes the kernel for the others.

Each fault below is followed by a request from a healthy client that must be
answered: a subscriber that never reads iopub while a cell prints a lot (the
healthy client's output keeps flowing, the kernel's memory stays bounded), a
silent TCP connection and a half-sent ZeroMQ handshake held open on every
port, and a replayed, validly signed execute_request (not executed twice).
Also the protocol 5.5 parts: supported_features, kernel_info on control, and
iopub_welcome for a new subscriber, followed by the idle of a request it
subscribed too late to see end.

Driven by Debian's jupyter_client and pyzmq against the installed gotrain
kernelspec; run with JUPYTER_PATH naming the folder the freshly built
kernelspec was installed into:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_wire.py
"""
import json
import os
import re
import socket
import tempfile
import threading
import time
import unittest

import zmq
from jupyter_client.manager import start_new_kernel
from jupyter_client.session import Session

TIMEOUT = 60

# A ZMTP 3.0 greeting's signature and major version, the rest never sent.
HALF_GREETING = b"\xff" + b"\x00" * 7 + b"\x01\x7f"

PORTS = ("shell_port", "control_port", "stdin_port", "iopub_port", "hb_port")


def rss_kib(pid):
    """The resident set size of process pid, from /proc/PID/status."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


class Wire(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The kernel's log (slog on stderr) says what it dropped.
        cls.log = tempfile.NamedTemporaryFile(prefix="gotrain-wire-", suffix=".log", delete=False)
        cls.km, cls.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60, stderr=cls.log)
        cls.ctx = zmq.Context()
        cls.pid = cls.km.provisioner.process.pid

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)
        cls.ctx.destroy(linger=0)
        cls.log.close()
        os.unlink(cls.log.name)

    def kernel_log(self):
        with open(self.log.name) as f:
            return f.read()

    def run_cell(self, code, kc=None, **kw):
        outputs = []
        kc = kc or self.kc
        reply = kc.execute_interactive(code, timeout=TIMEOUT, output_hook=outputs.append, **kw)
        reply["outputs"] = outputs
        return reply

    def assert_answers(self, kc=None):
        """A healthy client's request is answered, with its result."""
        reply = self.run_cell("6 * 7", kc=kc)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        results = [m["content"]["data"]["text/plain"] for m in reply["outputs"] if m["msg_type"] == "execute_result"]
        self.assertEqual(results, ["42"])

    def other_client(self):
        """Another client, with a session, so an identity, of its own: km.client()
        reuses the manager's session, and the kernel, as libzmq's ROUTER does, refuses
        a second connection with an identity already connected (issue 31)."""
        return self.km.client(session=Session(key=self.km.session.key,
                                              signature_scheme=self.km.session.signature_scheme))

    def new_client(self):
        """A second client, connected after the fault, and ready."""
        kc = self.other_client()
        kc.start_channels()
        self.addCleanup(kc.stop_channels)
        kc.wait_for_ready(timeout=TIMEOUT)
        return kc

    def endpoint(self, port_name):
        info = self.km.get_connection_info()
        return info["ip"], info[port_name]

    def wait_for_welcome(self, kc, deadline):
        """Reads kc's iopub until an iopub_welcome arrives."""
        while time.monotonic() < deadline:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except Exception:
                continue
            if msg["msg_type"] == "iopub_welcome":
                return msg
        self.fail("no iopub_welcome")

    # Protocol 5.5.

    def test_kernel_info_5_5(self):
        for channel in ("shell", "control"):
            with self.subTest(channel=channel):
                msg = self.kc.session.msg("kernel_info_request")
                getattr(self.kc, channel + "_channel").send(msg)
                get = getattr(self.kc, f"get_{channel}_msg")
                while True:
                    reply = get(timeout=TIMEOUT)
                    if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                        break
                self.assertEqual(reply["content"]["protocol_version"], "5.5")
                self.assertEqual(reply["content"]["supported_features"], [])

    def test_iopub_welcome(self):
        kc = self.other_client()
        kc.start_channels()
        self.addCleanup(kc.stop_channels)
        msg = self.wait_for_welcome(kc, time.monotonic() + TIMEOUT)
        self.assertEqual(msg["content"], {"subscription": ""})
        self.assertEqual(msg["parent_header"], {})
        self.assert_answers(kc)

    def test_late_subscriber_sees_its_request_end(self):
        # JupyterLab's first kernel_info_request, served before its
        # websocket's iopub subscription reached the kernel: jupyter_server
        # 1.23 skips the nudge that would have waited for the subscription
        # when its activity watcher has seen the busy of its own
        # kernel_info_request and not yet the idle (tests/lab/README.md).
        # The late subscriber gets its reply and, after its iopub_welcome,
        # the idle of that request; JupyterLab waits for that idle.
        late = self.other_client()
        late.start_channels(iopub=False, stdin=False, hb=False, control=False)
        self.addCleanup(late.stop_channels)
        first = late.kernel_info()
        late.get_shell_msg(timeout=TIMEOUT)
        # The client subscribed all along sees the request end before the
        # late one subscribes.
        self.wait_for_idle(self.kc, first, time.monotonic() + TIMEOUT)
        late.iopub_channel.start()
        self.wait_for_welcome(late, time.monotonic() + TIMEOUT)
        # A second request bounds the wait: what the kernel sends after the
        # welcome comes before this request's busy.
        second = late.kernel_info()
        got = self.wait_for_idle(late, second, time.monotonic() + TIMEOUT)
        names = {first: "first", second: "second"}
        seen = [f"{m['msg_type']}:{m['content'].get('execution_state', '')}"
                f"({names.get(m['parent_header'].get('msg_id'), 'other')})" for m in got]
        self.assertEqual(seen, ["status:idle(first)", "status:busy(second)", "status:idle(second)"])

    def wait_for_idle(self, kc, msg_id, deadline):
        """Reads kc's iopub until the idle status of msg_id, and returns
        what it read."""
        got = []
        while time.monotonic() < deadline:
            try:
                msg = kc.get_iopub_msg(timeout=1)
            except Exception:
                continue
            got.append(msg)
            if (msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"
                    and msg["parent_header"].get("msg_id") == msg_id):
                return got
        self.fail(f"no idle status for {msg_id}; got {[m['msg_type'] for m in got]}")

    # Wire faults.

    def test_subscriber_that_never_reads(self):
        # A subscriber with tiny buffers that never calls recv: once its
        # socket buffers are full, the kernel can send it nothing more.
        stuck = self.ctx.socket(zmq.SUB)
        stuck.setsockopt(zmq.RCVHWM, 1)
        stuck.setsockopt(zmq.RCVBUF, 4096)
        stuck.setsockopt(zmq.SUBSCRIBE, b"")
        ip, port = self.endpoint("iopub_port")
        stuck.connect(f"tcp://{ip}:{port}")
        self.addCleanup(stuck.close, 0)
        # Its subscription has taken effect when its own iopub_welcome
        # arrives (to it alone); it reads nothing after that.
        if not stuck.poll(TIMEOUT * 1000):
            self.fail("no iopub_welcome for the stuck subscriber")
        self.assertIn(b"iopub_welcome", stuck.recv_multipart()[0])

        before = rss_kib(self.pid)
        lines, size, runs = 2048, 64 << 10, 3  # 128 MiB of output per run
        code = ('import (\n\t"fmt"\n\t"strings"\n)\n'
                f'line := strings.Repeat("x", {size - 1})\n'
                f'for i := 0; i < {lines}; i++ {{ fmt.Println(line) }}')
        peaks = []
        for run in range(runs):
            peak = [rss_kib(self.pid)]
            done = threading.Event()

            def sample():
                while not done.is_set():
                    peak[0] = max(peak[0], rss_kib(self.pid))
                    time.sleep(0.02)

            sampler = threading.Thread(target=sample)
            sampler.start()
            try:
                reply = self.run_cell(code)
            finally:
                done.set()
                sampler.join()
            self.assertEqual(reply["content"]["status"], "ok", reply["content"])
            got = sum(len(m["content"]["text"]) for m in reply["outputs"] if m["msg_type"] == "stream")
            # The healthy client kept getting the cell's output.
            self.assertGreater(got, lines * size // 2, f"run {run}")
            peaks.append(peak[0])
        drops = [int(n) for n in re.findall(r"dropped_total=(\d+)", self.kernel_log())]
        print(f"\n  kernel RSS {before >> 10} MiB before, peaks {[p >> 10 for p in peaks]} MiB over {runs} cells"
              f" of {lines * size >> 20} MiB output each; dropped for the stuck subscriber: at least"
              f" {max(drops, default=0)} messages (logged)", flush=True)
        self.assertTrue(drops, "the kernel logged no drops for the stuck subscriber")
        # Memory is bounded: the stuck subscriber's queue (16 MiB and a reserve
        # of 4 MiB in the kernel, the healthy one's the same) fills during the
        # first cell, and more output does not make the kernel grow beyond the
        # garbage collector's slack. Unbounded, the kernel would hold all
        # 384 MiB for the stuck subscriber, each cell adding its 128 MiB.
        growth = [(p - before) / 1024 for p in peaks]
        self.assertLess(max(growth), 192, f"kernel memory grew with the output: {growth} MiB")
        self.assertLess(growth[-1] - growth[0], 96, f"kernel memory grew with the output: {growth} MiB")
        self.assert_answers()

    def hold_open(self, first_bytes):
        """Opens a TCP connection to every port, sends first_bytes and
        nothing more; the connections stay open until the test ends."""
        conns = []
        for name in PORTS:
            s = socket.create_connection(self.endpoint(name))
            self.addCleanup(s.close)
            if first_bytes:
                s.sendall(first_bytes)
            conns.append((name, s))
        return conns

    def assert_hung_up(self, conns, within):
        """The kernel closes each stalled connection after its handshake
        timeout (10 s)."""
        deadline = time.monotonic() + within
        for name, s in conns:
            s.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                while s.recv(4096):
                    pass  # the kernel's half of the greeting
            except socket.timeout:
                self.fail(f"{name}: stalled connection still open after {within} s")
            except ConnectionResetError:
                pass

    def test_silent_connection_on_every_port(self):
        conns = self.hold_open(b"")
        time.sleep(0.2)
        self.assert_answers()
        self.assert_answers(self.new_client())
        self.assert_hung_up(conns, within=30)

    def test_half_sent_handshake_on_every_port(self):
        conns = self.hold_open(HALF_GREETING)
        time.sleep(0.2)
        self.assert_answers()
        self.assert_answers(self.new_client())
        self.assert_hung_up(conns, within=30)

    def test_replayed_execute_request(self):
        self.assertEqual(self.run_cell("replays := 0")["content"]["status"], "ok")
        msg = self.kc.session.msg("execute_request", {
            "code": "replays++", "silent": False, "store_history": True,
            "user_expressions": {}, "allow_stdin": False, "stop_on_error": True})
        frames = self.kc.session.serialize(msg)
        sock = self.kc.shell_channel.socket
        sock.send_multipart(frames)
        sock.send_multipart(frames)  # the replay: the same signed frames
        replies = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            try:
                reply = self.kc.get_shell_msg(timeout=0.5)
            except Exception:
                continue
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                replies.append(reply)
        self.assertEqual(len(replies), 1, [r["content"] for r in replies])
        reply = self.run_cell("replays")
        results = [m["content"]["data"]["text/plain"] for m in reply["outputs"] if m["msg_type"] == "execute_result"]
        self.assertEqual(results, ["1"], "the replayed cell ran twice")
        self.assertIn("dropped replayed message", self.kernel_log())


if __name__ == "__main__":
    unittest.main()
