"""A user's mistakes and a hostile client never cost the session.

Each bad input below is followed by a call to a closure defined in the first
cell: the closure must still see and update the same state. Driven by Debian's
jupyter_client against the installed gotrain kernelspec.
"""
import hashlib
import hmac
import json
import queue
import signal
import time
import unittest
import uuid

from jupyter_client.manager import start_new_kernel

TIMEOUT = 60


class Robustness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)
        reply = cls.run_cell(cls, "counter := 40\nbump := func() int { counter++; return counter }")
        assert reply["content"]["status"] == "ok", reply["content"]
        cls.expected = 40

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def run_cell(self, code, **kw):
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=TIMEOUT, output_hook=outputs.append, **kw)
        reply["outputs"] = outputs
        return reply

    def assert_state_intact(self):
        """The closure from the first cell still counts where it left off."""
        type(self).expected += 1
        reply = self.run_cell("bump()")
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        results = [m for m in reply["outputs"] if m["msg_type"] == "execute_result"]
        self.assertEqual(len(results), 1, reply["outputs"])
        self.assertEqual(results[0]["content"]["data"]["text/plain"], str(self.expected))

    def send_raw(self, frames):
        """Sends frames on the shell socket, bypassing the client's signing."""
        self.kc.shell_channel.socket.send_multipart(frames)

    def assert_no_shell_reply(self, seconds=1.5):
        with self.assertRaises(queue.Empty):
            self.kc.get_shell_msg(timeout=seconds)

    def frames(self, content_bytes, key):
        header = json.dumps({"msg_id": uuid.uuid4().hex, "username": "test", "session": self.kc.session.session,
                             "date": "2026-01-01T00:00:00.000000Z", "msg_type": "execute_request",
                             "version": "5.3"}).encode()
        parts = [header, b"{}", b"{}", content_bytes]
        sig = hmac.new(key, digestmod=hashlib.sha256)
        for p in parts:
            sig.update(p)
        return [b"<IDS|MSG>", sig.hexdigest().encode()] + parts

    def test_forged_signature(self):
        content = json.dumps({"code": "counter = 1000", "silent": False}).encode()
        self.send_raw(self.frames(content, b"not-the-key"))
        self.assert_no_shell_reply()
        self.assert_state_intact()

    def test_malformed_json(self):
        self.send_raw(self.frames(b'{"code": "counter = 1000", ', self.kc.session.key))
        self.assert_no_shell_reply()
        self.assert_state_intact()

    def test_syntax_error(self):
        reply = self.run_cell("counter = = 3")
        self.assertEqual(reply["content"]["status"], "error")
        errors = [m for m in reply["outputs"] if m["msg_type"] == "error"]
        self.assertEqual(len(errors), 1)
        self.assertIn("1:", errors[0]["content"]["evalue"] + "".join(errors[0]["content"]["traceback"]))
        self.assert_state_intact()

    def test_runtime_panic(self):
        reply = self.run_cell("var m map[string]int\nm[\"a\"] = 1")
        self.assertEqual(reply["content"]["status"], "error")
        self.assertIn("nil map", reply["content"]["evalue"])
        self.assert_state_intact()

    def test_goroutine_panic(self):
        reply = self.run_cell('import "time"\ngo func() { panic("boom in goroutine") }()\ntime.Sleep(300 * time.Millisecond)')
        text = json.dumps([m["content"] for m in reply["outputs"]])
        self.assertIn("boom in goroutine", text)
        self.assert_state_intact()

    def interrupt_during(self, code, by_signal=False):
        msg_id = self.kc.execute(code)
        time.sleep(0.8)
        started = time.monotonic()
        if by_signal:
            # A terminal's Ctrl-C reaches the kernel as SIGINT, not as a message.
            self.km.signal_kernel(signal.SIGINT)
        else:
            self.km.interrupt_kernel()  # interrupt_request, as the kernelspec's interrupt_mode says
        while True:
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        elapsed = time.monotonic() - started
        self.assertEqual(reply["content"]["status"], "error")
        self.assertEqual(reply["content"]["ename"], "Interrupted")
        self.assertLess(elapsed, 5.0, "the cell took too long to stop")

    def test_interrupt_sleeping_loop(self):
        self.interrupt_during('import "time"\nfor { time.Sleep(10 * time.Millisecond) }')
        self.assert_state_intact()

    def test_interrupt_by_sigint(self):
        self.interrupt_during('import "time"\nfor { time.Sleep(10 * time.Millisecond) }', by_signal=True)
        self.assert_state_intact()

    def test_interrupt_printing_loop(self):
        self.interrupt_during('import "fmt"\nfor i := 0; ; i++ { fmt.Println(i) }')
        self.assert_state_intact()

    def test_stdin(self):
        prompts = []

        def answer(msg):
            prompts.append(msg["content"]["prompt"])
            self.kc.input("gopher")

        reply = self.run_cell('import "fmt"\nvar name string\nfmt.Scanln(&name)\n"hello " + name',
                              allow_stdin=True, stdin_hook=answer)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        results = [m for m in reply["outputs"] if m["msg_type"] == "execute_result"]
        self.assertEqual(results[0]["content"]["data"]["text/plain"], "hello gopher")
        self.assertEqual(len(prompts), 1)
        self.assert_state_intact()


if __name__ == "__main__":
    unittest.main()
