"""Drive a running kernel with Debian's jupyter_client and print one JSON
object describing what came back. Used by jupyter_test.go (-tags jupyter).

Usage: python3 jupyter_client_check.py CONNECTION_FILE
"""
import json
import statistics
import sys
import time

from jupyter_client import BlockingKernelClient

TIMEOUT = 20


def iopub_for(kc, msg_id):
    """Collect iopub messages of one request up to its idle status."""
    out = []
    while True:
        m = kc.get_iopub_msg(timeout=TIMEOUT)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(m)
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out


def main():
    kc = BlockingKernelClient()
    kc.load_connection_file(sys.argv[1])
    kc.start_channels()
    kc.wait_for_ready(timeout=TIMEOUT)
    res = {}

    info = kc.kernel_info(reply=True, timeout=TIMEOUT)
    res["kernel_info"] = info["content"]

    msg_id = kc.execute("print")
    reply = kc.get_shell_msg(timeout=TIMEOUT)
    res["execute_reply"] = reply["content"]
    res["execute_iopub"] = [m["msg_type"] for m in iopub_for(kc, msg_id)]

    res["complete"] = kc.complete("fmt.Pr", 6, reply=True, timeout=TIMEOUT)["content"]
    kc.is_complete("for {")
    res["is_complete"] = kc.get_shell_msg(timeout=TIMEOUT)["content"]
    res["history"] = kc.history(hist_access_type="tail", n=5, reply=True, timeout=TIMEOUT)["content"]

    # stdin round trip: the client answers input_request with "gopher".
    prompts = []

    def answer(msg):
        prompts.append(msg["content"]["prompt"])
        kc.input("gopher")

    out = []
    reply = kc.execute_interactive("input", timeout=TIMEOUT, stdin_hook=answer,
                                   output_hook=lambda m: out.append(m))
    res["input_prompts"] = prompts
    res["input_stream"] = [m["content"].get("text") for m in out if m["msg_type"] == "stream"]

    # Round-trip latency of a trivial cell, as ../shared/bench/kernel_latency.py
    # measures it, for the log; tests never assert on it.
    samples = []
    for _ in range(100):
        t = time.perf_counter()
        kc.execute_interactive("1+1", timeout=TIMEOUT, output_hook=lambda m: None)
        samples.append(time.perf_counter() - t)
    res["latency_p50_ms"] = round(statistics.median(samples) * 1e3, 2)

    ctl = kc.session.msg("interrupt_request", {})
    kc.control_channel.send(ctl)
    res["interrupt_reply"] = kc.get_control_msg(timeout=TIMEOUT)["content"]

    hb = kc.hb_channel
    res["hb_beating"] = hb.is_beating()

    kc.shutdown(restart=False)
    res["shutdown_reply"] = kc.get_control_msg(timeout=TIMEOUT)["content"]
    kc.stop_channels()
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
