#!/usr/bin/python3
"""Compiled cells through a real kernel (Debian's jupyter_client): a new trivial
cell each time, then compute inside cells against `go run` of the same code.
Prints figures; asserts nothing.

usage: cells_bench.py [N_NEW]
       cells_bench.py curve [CELLS]   new-cell latency (p50, p90 of 20 cells) and the worker's
                                      resident memory (anonymous and file-backed) at cells 1, 100,
                                      500, 1,000 and 2,000
       cells_bench.py burst [CELLS]   CELLS distinct cells sent at once by 4 clients: wall time,
                                      replies in order per client, and a new client's
                                      kernel_info round trip every second meanwhile
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import start_new_kernel

MODE = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("curve", "burst") else "compute"
if MODE != "compute":
    sys.argv.pop(1)
n_new = int(sys.argv[1]) if len(sys.argv) > 1 else {"compute": 40, "curve": 2000, "burst": 500}[MODE]

# Each program prints "ms <elapsed>" measured inside it, so the figures
# compare the code's speed, not compilation.
COMPUTE = {
    "fib(25)": (
        "func fib(n int) int {\n\tif n < 2 {\n\t\treturn n\n\t}\n\treturn fib(n-1) + fib(n-2)\n}\n",
        "start := time.Now()\nr := 0\nfor k := 0; k < 20; k++ {\n\tr += fib(25)\n}\n"
        "fmt.Printf(\"ms %.3f %d\\n\", float64(time.Since(start).Microseconds())/1000/20, r)\n",
    ),
    "1e7-iteration loop": (
        "",
        "start := time.Now()\ns := 0\nfor i := 0; i < 10_000_000; i++ {\n\ts += i % 7\n}\n"
        "fmt.Printf(\"ms %.3f %d\\n\", float64(time.Since(start).Microseconds())/1000, s)\n",
    ),
    "parse a 10 MB CSV": (
        "",
        "var b strings.Builder\nfor i := 0; b.Len() < 10<<20; i++ {\n\tfmt.Fprintf(&b, \"%d,%d.5,name%d\\n\", i, i*3, i%97)\n}\n"
        "text := b.String()\nstart := time.Now()\nrows, err := csv.NewReader(strings.NewReader(text)).ReadAll()\n"
        "if err != nil {\n\tpanic(err)\n}\nsum := 0.0\nfor _, r := range rows {\n\tv, _ := strconv.ParseFloat(r[1], 64)\n\tsum += v\n}\n"
        "fmt.Printf(\"ms %.3f %d %.1f\\n\", float64(time.Since(start).Microseconds())/1000, len(rows), sum)\n",
    ),
}
IMPORTS = 'import (\n\t"encoding/csv"\n\t"fmt"\n\t"strconv"\n\t"strings"\n\t"time"\n)\n'


def execute(kc, code):
    msg_id = kc.execute(code)
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            raise RuntimeError(msg["content"]["evalue"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    # Skip replies to earlier requests, such as wait_for_ready's extra kernel_info probes.
    while kc.get_shell_msg(timeout=120)["parent_header"].get("msg_id") != msg_id:
        pass
    return "".join(out)


def ms_of(text):
    for line in text.splitlines():
        if line.startswith("ms "):
            return float(line.split()[1])
    raise RuntimeError("no timing in " + repr(text))


def descendants(pid):
    """The pids of pid's children, grandchildren, ... (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            tasks = []
        for t in tasks:  # a Go program starts children from any of its threads
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids += [int(k) for k in f.read().split()]
            except OSError:
                pass
        out += kids
        todo += kids
    return out


def rss_mib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def worker_rss(km, field="VmRSS"):
    """The resident memory of the kernel's worker processes, MiB: all of it (VmRSS), the private part (RssAnon:
    heaps, and the plugins' data once relocated) or the file-backed part (RssFile: the plugins' code and read-only
    data, clean pages the system can drop and read again)."""
    return sum(rss_mib(p, field) for p in descendants(km.provisioner.process.pid))


def curve(n):
    marks = [m for m in (1, 100, 500, 1000, 2000) if m <= n]
    km, kc = start_new_kernel(kernel_name="gotrain")
    try:
        execute(kc, IMPORTS)
        times = []
        started = time.perf_counter()
        for i in range(1, n + 1):
            t0 = time.perf_counter()
            execute(kc, f"c{i} := {i}")
            times.append((time.perf_counter() - t0) * 1000)
            if i in marks:
                window = sorted(times[max(0, i - 20):i])
                print(f"cell {i}: new-cell latency p50 {statistics.median(window):.0f} ms, "
                      f"p90 {window[int(0.9 * (len(window) - 1))]:.0f} ms (last {len(window)}); "
                      f"worker RSS {worker_rss(km):.0f} MiB (anonymous {worker_rss(km, 'RssAnon'):.0f}, "
                      f"file-backed {worker_rss(km, 'RssFile'):.0f}); {time.perf_counter() - started:.0f} s so far", flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def new_client(km):
    """A client of its own, as a second notebook or console is: km.client() would share km's session, and with
    it the shell socket's routing identity, so that the kernel could not tell the clients apart (ipykernel's
    ROUTER refuses such a second client; ours sends each reply to every peer of that identity)."""
    from jupyter_client.session import Session
    return km.client(session=Session(key=km.session.key, signature_scheme=km.session.signature_scheme))


def burst(n, clients=4):
    import threading
    km, kc = start_new_kernel(kernel_name="gotrain")
    extra = [new_client(km) for _ in range(clients - 1)]
    for c in extra:
        c.start_channels()
        c.wait_for_ready(timeout=60)
    all_clients = [kc] + extra
    try:
        execute(kc, "x := 0")
        sent = [[] for _ in all_clients]
        t0 = time.perf_counter()
        for i in range(n):
            k = i % clients
            sent[k].append(all_clients[k].execute(f"b{i} := x + {i}"))
        probes, stop = [], threading.Event()

        def probe():
            while not stop.is_set():
                c = new_client(km)
                c.start_channels()
                p0 = time.perf_counter()
                try:
                    c.kernel_info(reply=True, timeout=30)
                    probes.append(time.perf_counter() - p0)
                except Exception:
                    probes.append(float("inf"))
                c.stop_channels()
                stop.wait(1)

        th = threading.Thread(target=probe)
        th.start()
        in_order = True
        for k, c in enumerate(all_clients):
            got = []
            while len(got) < len(sent[k]):
                m = c.get_shell_msg(timeout=600)
                if m["msg_type"] == "execute_reply":
                    got.append(m["parent_header"]["msg_id"])
            in_order = in_order and got == sent[k]
        wall = time.perf_counter() - t0
        stop.set()
        th.join()
        print(f"burst of {n} distinct cells from {clients} clients: {wall:.0f} s ({n / wall:.1f} cells/s), "
              f"every reply to its client in order: {in_order}; a new client's kernel_info meanwhile: "
              f"{len(probes)} probes, slowest {max(probes, default=0):.2f} s, "
              f"{sum(p > 1 for p in probes)} over 1 s", flush=True)
    finally:
        for c in extra:
            c.stop_channels()
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if MODE == "curve":
    curve(n_new)
    sys.exit(0)
if MODE == "burst":
    burst(n_new)
    sys.exit(0)

km, kc = start_new_kernel(kernel_name="gotrain")
try:
    execute(kc, IMPORTS)
    times = []
    for i in range(n_new):
        t0 = time.perf_counter()
        execute(kc, f"v{i} := {i}")
        times.append((time.perf_counter() - t0) * 1000)
    print(f"new trivial cell (warm), {n_new} cells: p50 {statistics.median(times):.0f} ms, "
          f"p90 {sorted(times)[int(0.9 * len(times))]:.0f} ms, first {times[0]:.0f} ms")
    cells = {}
    for name, (decls, stmts) in COMPUTE.items():
        if decls:
            execute(kc, decls)
        samples = [ms_of(execute(kc, stmts)) for _ in range(3)]
        cells[name] = min(samples)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)

with tempfile.TemporaryDirectory() as d:
    for name, (decls, stmts) in COMPUTE.items():
        body = "\n".join("\t" + l for l in stmts.splitlines())
        # The cells share one import cell; a program must use every import.
        uses = "var _, _, _ = csv.NewReader, strconv.Itoa, strings.Fields\n"
        src = "package main\n\n" + IMPORTS + "\n" + uses + decls + "\nfunc main() {\n" + body + "\n}\n"
        path = os.path.join(d, "main.go")
        with open(path, "w") as f:
            f.write(src)
        exe = os.path.join(d, "prog")
        subprocess.run(["go", "build", "-o", exe, path], check=True, cwd=d)
        ref = min(ms_of(subprocess.run([exe], capture_output=True, text=True, check=True).stdout) for _ in range(3))
        print(f"{name}: cell {cells[name]:.2f} ms, go run {ref:.2f} ms, ratio {cells[name] / ref:.2f}x (lower is better)")
