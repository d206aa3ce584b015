#!/usr/bin/python3
"""Start-up of a kernel as the time from launching it to its first kernel_info_reply,
measured with Debian's jupyter_client (a blocking client, no iopub check), N times.

usage: first_reply.py KERNEL_NAME [N]
"""
import statistics
import sys
import time
from queue import Empty

from jupyter_client import BlockingKernelClient
from jupyter_client.manager import KernelManager

name = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 7
samples = []
for _ in range(n):
    t0 = time.perf_counter()
    km = KernelManager(kernel_name=name)
    km.start_kernel()
    kc = BlockingKernelClient(connection_file=km.connection_file)
    kc.load_connection_file()
    kc.start_channels()
    try:
        msg_id = kc.kernel_info()
        while True:
            reply = kc.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                samples.append(time.perf_counter() - t0)
                break
    except Empty:
        sys.exit(f"{name}: no kernel_info_reply within 30 s")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
samples.sort()
print(f"{name}: first kernel_info_reply median {statistics.median(samples) * 1e3:.0f} ms, "
      f"min {samples[0] * 1e3:.0f} ms, max {samples[-1] * 1e3:.0f} ms over {n}")
