"""Output through the kernel: a loop of 100,000 prints, and the latency of one print.

    /usr/bin/python3 scripts/stream_bench.py KERNEL_NAME [LINES]

Prints one line per figure. The loop's text must arrive complete and in
order (checked, not timed alone); the latency is from execute_request to
the stream message of a cell that prints once and then sleeps, median of 21.
"""
import statistics
import sys
import time

from jupyter_client.manager import start_new_kernel

CELLS = {
    "gotrain": ('import ("fmt"; "time")', 'for i := 0; i < %d; i++ { fmt.Println(i) }',
                'fmt.Println("x"); time.Sleep(200 * time.Millisecond)'),
    "python3": ("import time", "for i in range(%d): print(i)", 'print("x"); time.sleep(0.2)'),
}


def main():
    name = sys.argv[1]
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    setup, loop, once = CELLS["gotrain" if name.startswith("gotrain") else "python3"]
    km, kc = start_new_kernel(kernel_name=name, startup_timeout=60)
    try:
        kc.execute_interactive(setup, timeout=60, output_hook=lambda m: None)
        got, messages = [], 0

        def hook(m):
            nonlocal messages
            if m["msg_type"] == "stream":
                got.append(m["content"]["text"])
                messages += 1

        start = time.perf_counter()
        kc.execute_interactive(loop % lines, timeout=600, output_hook=hook)
        took = time.perf_counter() - start
        text = "".join(got).splitlines()
        ok = text == [str(i) for i in range(lines)]
        print(f"{name}: {lines} lines in {took:.2f} s, {lines / took:,.0f} lines/s, "
              f"{messages} stream messages, {'complete and in order' if ok else 'WRONG OUTPUT'}")

        delays = []
        for _ in range(21):
            msg_id = kc.execute(once)
            sent = time.perf_counter()
            while True:
                m = kc.get_iopub_msg(timeout=30)
                if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "stream":
                    delays.append((time.perf_counter() - sent) * 1e3)
                    break
            while kc.get_shell_msg(timeout=30)["parent_header"].get("msg_id") != msg_id:
                pass
        print(f"{name}: execute_request to first stream message, median of 21: {statistics.median(delays):.2f} ms")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()
