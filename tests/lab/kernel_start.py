"""kernel_start.py starts the kernel as JupyterLab does, many times, on
Debian's jupyter_server, and counts the starts whose first kernel_info_request
never saw its idle status: the race in docs/cells.md (The wire), without a browser.

Each round starts a kernel (POST /api/kernels), opens its websocket with the
legacy JSON protocol JupyterLab 3.6 speaks, sends kernel_info_request as soon
as the websocket is open, and waits for the reply and the idle status with
that request as parent. With --skip-nudge, jupyter_server skips its nudge on
every websocket, as 1.23 does when its activity watcher believes the kernel
busy; with --late-iopub S as well, each websocket's iopub subscription is
sent S seconds late, so every kernel_info_request is served before it: the
worst case of the race, every time. The server's debug log, with "Nudge: not
nudging busy kernel" for each skip, is written to --log.

    JUPYTER_PATH=$PWD/build/jupyter/share/jupyter /usr/bin/python3 tests/lab/kernel_start.py --rounds 40
    JUPYTER_PATH=... /usr/bin/python3 tests/lab/kernel_start.py --skip-nudge --late-iopub 0.5

It is a diagnostic, not a test: the tests of the race are
TestIssue15LateSubscriber (kernel/wire_test.go) and
test_late_subscriber_sees_its_request_end (tests/jupyter/test_wire.py).
"""

import argparse
import asyncio
import datetime
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from tornado.httpclient import AsyncHTTPClient
from tornado.websocket import websocket_connect

# Run by the server's Python when --skip-nudge is given: jupyter_server with
# ZMQChannelsHandler.nudge skipped every time, and, when LATE_IOPUB is set,
# each websocket's iopub subscription sent that many seconds late.
SKIPPING_SERVER = """
import os
import zmq
from tornado.ioloop import IOLoop
from jupyter_server.services.kernels import handlers
nudge, create_stream = handlers.ZMQChannelsHandler.nudge, handlers.ZMQChannelsHandler.create_stream
def skip(self):
    self.kernel_manager.get_kernel(self.kernel_id).execution_state = "busy"
    return nudge(self)
def late(self):
    create_stream(self)
    sock = self.channels["iopub"].socket
    sock.setsockopt(zmq.UNSUBSCRIBE, b"")
    IOLoop.current().call_later(float(os.environ["LATE_IOPUB"]), sock.setsockopt, zmq.SUBSCRIBE, b"")
handlers.ZMQChannelsHandler.nudge = skip
if os.environ.get("LATE_IOPUB"):
    handlers.ZMQChannelsHandler.create_stream = late
from jupyter_server.serverapp import main
main()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_once(base, token, kernel, wait):
    """One kernel start; returns (ok, what the websocket got)."""
    http = AsyncHTTPClient()
    auth = {"Authorization": "token " + token}
    r = await http.fetch(base + "/api/kernels", method="POST", body=json.dumps({"name": kernel}), headers=auth)
    kid = json.loads(r.body)["id"]
    client = str(uuid.uuid4())
    ws = await websocket_connect(f"ws{base[4:]}/api/kernels/{kid}/channels?session_id={client}&token={token}")
    mid = str(uuid.uuid4())
    header = {"msg_id": mid, "msg_type": "kernel_info_request", "username": "", "session": client,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "version": "5.2"}
    await ws.write_message(json.dumps({"header": header, "parent_header": {}, "metadata": {}, "content": {},
                                       "channel": "shell", "buffers": []}))
    seen, reply, idle = [], False, False
    deadline = time.monotonic() + wait
    while not (reply and idle):
        try:
            m = await asyncio.wait_for(ws.read_message(), deadline - time.monotonic())
        except asyncio.TimeoutError:
            break
        if m is None:
            seen.append("closed")
            break
        m = json.loads(m)
        mine = m["parent_header"].get("msg_id") == mid
        state = m["content"].get("execution_state")
        seen.append(m["msg_type"] + (":" + state if state else "") + ("*" if mine else ""))
        reply |= mine and m["msg_type"] == "kernel_info_reply"
        idle |= mine and state == "idle"
    ws.close()
    await http.fetch(base + "/api/kernels/" + kid, method="DELETE", headers=auth)
    return reply and idle, seen


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--kernel", default="gotrain")
    ap.add_argument("--wait", type=float, default=5, help="seconds to wait for the reply and the idle")
    ap.add_argument("--skip-nudge", action="store_true")
    ap.add_argument("--late-iopub", type=float, default=0, help="with --skip-nudge: seconds")
    ap.add_argument("--log", default=os.path.join(tempfile.gettempdir(), "gotrain-kernel-start.log"))
    args = ap.parse_args()

    port, token = free_port(), secrets.token_hex(16)
    scratch = tempfile.mkdtemp(prefix="gotrain-kernel-start-")
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=os.path.join(scratch, "runtime"),
               JUPYTER_CONFIG_DIR=os.path.join(scratch, "config"))
    if args.late_iopub:
        env["LATE_IOPUB"] = str(args.late_iopub)
    server = ["-c", SKIPPING_SERVER] if args.skip_nudge else ["-m", "jupyter_server"]
    with open(args.log, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, *server, f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.token={token}", f"--ServerApp.root_dir={scratch}", "--ServerApp.open_browser=False",
             "--ServerApp.port_retries=0", "--allow-root", "--debug"],
            stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                await AsyncHTTPClient().fetch(base + "/api/status", headers={"Authorization": "token " + token})
                break
            except Exception:
                await asyncio.sleep(0.2)
        bad = 0
        for i in range(args.rounds):
            ok, seen = await start_once(base, token, args.kernel, args.wait)
            bad += not ok
            print(f"{i:3d} {'ok ' if ok else 'LOST'} {' '.join(seen)}", flush=True)
    finally:
        proc.terminate()
        proc.wait()
    with open(args.log) as f:
        skips = f.read().count("Nudge: not nudging busy kernel")
    print(f"{bad} of {args.rounds} starts never saw their kernel_info_request's idle; "
          f"jupyter_server skipped the nudge {skips} times (log: {args.log})")


if __name__ == "__main__":
    asyncio.run(main())
