#!/usr/bin/python3
"""Compiled cells through a real kernel (Debian's jupyter_client): a new trivial
cell each time, then compute inside cells against `go run` of the same code.
Prints figures; asserts nothing.

usage: cells_bench.py [N_NEW]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import start_new_kernel

n_new = int(sys.argv[1]) if len(sys.argv) > 1 else 40

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
    kc.get_shell_msg(timeout=120)
    return "".join(out)


def ms_of(text):
    for line in text.splitlines():
        if line.startswith("ms "):
            return float(line.split()[1])
    raise RuntimeError("no timing in " + repr(text))


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
