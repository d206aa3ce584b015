"""Issue 33: a notebook exported by `gotrain export` prints the losses the notebook prints under nbconvert.

Each notebook runs headless under nbconvert with the gotrain kernel, and as the program `gotrain export` writes
(built with go run inside this module); the lines the notebook's cells print that carry a loss must come out of
the program, in the same order and with the same digits (the live monitor's summary line included, less its
timings). 06-gpt runs with its Iterations constant lowered in both:
in a copy of the notebook, and with --set Iterations=N in the program.

04-multi-worker's program (its %workers 2 made it one for mpirun) is built with -tags mpi and run under
`mpirun -np 2`: it must train to the losses of one process with two replicas, as the notebook's own test
(test_notebooks.py) wants of its two workers: the same final loss to 4 digits, and no step's loss more than 1e-5
away.

    /usr/bin/python3 -m unittest -v tests/notebooks/test_export.py

It wants bin/gotrain (install/build.sh) and, for the kernel, JUPYTER_PATH set as scripts/test.sh sets it.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTEBOOKS = os.path.join(ROOT, "notebooks")
GOTRAIN = os.path.join(ROOT, "bin", "gotrain")
# A line that reports a loss: the word, then a number with decimals.
LOSS = re.compile(r"\bloss\b.*\d\.\d+")
GPT_ITERATIONS = 10
# The live monitor's line carries wall-clock figures, which differ from run to run.
TIMING = re.compile(r"\s+(\S+ samples/s|elapsed \S+|ETA \S+)")


def normalized(line):
    return TIMING.sub("", line)


def execute(path):
    """Runs the notebook at path with jupyter nbconvert, in notebooks/, and returns the executed notebook."""
    out = tempfile.mkdtemp(prefix="gotrain-export-nb-")
    try:
        subprocess.run(
            ["/usr/bin/python3", "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
             "--ExecutePreprocessor.kernel_name=gotrain", "--ExecutePreprocessor.timeout=600",
             "--ExecutePreprocessor.allow_errors=True", "--output-dir", out, path],
            check=True, cwd=NOTEBOOKS, capture_output=True)
        with open(os.path.join(out, os.path.basename(path))) as f:
            return json.load(f)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def printed_losses(nb):
    """The loss lines the code cells print to stdout, up to the first cell that fails (a program stops there),
    and whether a cell failed."""
    lines = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        for out in cell["outputs"]:
            if out["output_type"] == "error":
                return lines, True
            if out["output_type"] == "stream" and out["name"] == "stdout":
                text = out["text"]
                text = "".join(text) if isinstance(text, list) else text
                lines += [normalized(l) for l in text.splitlines() if LOSS.search(l)]
    return lines, False


def run_exported(notebook, *flags):
    """Exports notebook into a folder of this module, runs it, and returns its exit status, stdout and stderr."""
    work = tempfile.mkdtemp(prefix="_export_nb_", dir=ROOT)  # the underscore keeps it out of ./...
    try:
        subprocess.run([GOTRAIN, "export", notebook, "-o", work, *flags], check=True, capture_output=True, text=True)
        run = subprocess.run(["go", "run", "./" + os.path.basename(work)], cwd=ROOT, capture_output=True, text=True,
                             env=dict(os.environ, PATH="/usr/local/go/bin:" + os.environ.get("PATH", "")))
        return run.returncode, run.stdout, run.stderr
    finally:
        shutil.rmtree(work, ignore_errors=True)


def in_order(want, got):
    """The first line of want that is not found in got after the previous one, or None."""
    i = 0
    for w in want:
        while i < len(got) and got[i] != w:
            i += 1
        if i == len(got):
            return w
        i += 1
    return None


class Export(unittest.TestCase):
    def assert_same_losses(self, notebook_path, program_notebook, *flags, at_least):
        want, failed = printed_losses(execute(notebook_path))
        self.assertGreaterEqual(len(want), at_least, f"the notebook printed too few loss lines: {want}")
        code, stdout, stderr = run_exported(program_notebook, *flags)
        if failed:
            # A cell that fails on purpose ends the program where it ended the cell.
            self.assertNotEqual(code, 0, "the program ran past the cell that failed in the notebook")
            self.assertIn("panic", stderr)
        else:
            self.assertEqual(code, 0, stderr)
        missing = in_order(want, [normalized(l) for l in stdout.splitlines()])
        self.assertIsNone(missing, f"the program did not print, in order, the notebook's line\n{missing}\n"
                                   f"notebook:\n" + "\n".join(want) + "\nprogram:\n" + stdout)

    def test_issue33_quickstart(self):
        path = os.path.join(NOTEBOOKS, "01-quickstart.ipynb")
        # The reduced loss of every step.
        self.assert_same_losses(path, path, at_least=8)

    def test_issue33_custom_loops(self):
        path = os.path.join(NOTEBOOKS, "03-custom-loops.ipynb")
        # 5 epochs of the weighted loss, then the step lines of the loop with logits.
        self.assert_same_losses(path, path, at_least=8)

    def test_issue33_gpt(self):
        path = os.path.join(NOTEBOOKS, "06-gpt.ipynb")
        with open(path) as f:
            nb = json.load(f)
        found = 0
        for cell in nb["cells"]:
            src = cell["source"]
            src = "".join(src) if isinstance(src, list) else src
            lowered = re.sub(r"(?m)^const Iterations = \d+", f"const Iterations = {GPT_ITERATIONS}", src)
            found += lowered != src
            cell["source"] = lowered
        self.assertEqual(found, 1, "06-gpt.ipynb: no line `const Iterations = N` to lower")
        d = tempfile.mkdtemp(prefix="gotrain-export-06-")
        try:
            short = os.path.join(d, "06-gpt.ipynb")
            with open(short, "w") as f:
                json.dump(nb, f)
            # The validation loss before training, and before and after the lowered training.
            self.assert_same_losses(short, path, "--set", f"Iterations={GPT_ITERATIONS}", at_least=2)
        finally:
            shutil.rmtree(d, ignore_errors=True)


    def test_issue33_multi_worker_under_mpirun(self):
        path = os.path.join(NOTEBOOKS, "04-multi-worker.ipynb")
        work = tempfile.mkdtemp(prefix="_export_nb_", dir=ROOT)
        tmp = tempfile.mkdtemp(prefix="gotrain-export-04-")
        try:
            subprocess.run([GOTRAIN, "export", path, "-o", work], check=True, capture_output=True, text=True)
            with open(os.path.join(work, "main.go")) as f:
                self.assertIn("mpirun --bind-to none -np 2 ./prog", f.read())
            go_env = dict(os.environ, PATH="/usr/local/go/bin:" + os.environ.get("PATH", ""))
            prog = os.path.join(tmp, "prog")
            subprocess.run(["go", "build", "-tags", "mpi", "-o", prog, "."], check=True, cwd=work, env=go_env)
            # As scripts/mpi-test.sh runs mpirun on this machine; TMPDIR is where the program's cell 4 writes
            # the two workers' losses (os.TempDir).
            env = dict(go_env, OMPI_MCA_btl="self,vader,tcp", TMPDIR=tmp)
            run = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                                  "--tag-output", "-np", "2", prog], capture_output=True, text=True, env=env,
                                 timeout=600)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        try:
            rank = {r: [l.split(":", 1)[1] for l in run.stdout.splitlines() if l.startswith(f"[1,{r}]<stdout>:")]
                    for r in (0, 1)}
            with open(os.path.join(tmp, "gotrain-04-losses.txt")) as f:
                two_workers = [float(l) for l in f.read().split()]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for r in (0, 1):
            out = "\n".join(rank[r])
            self.assertIn(f"MultiWorkerMirroredStrategy(worker {r} of 2", out)
            self.assertIn("replicas in sync: 2", out)
        two = [re.search(r"^2 workers: 64 steps, final loss (\d\.\d+)$", l) for l in rank[0]]
        two = [m.group(1) for m in two if m]
        self.assertEqual(len(two), 1, "\n".join(rank[0]))
        self.assertEqual(len(two_workers), 64)
        self.assertEqual(f"{two_workers[-1]:.4f}", two[0])
        # After %workers off only rank 0 runs: one process with two replicas, which compares its losses
        # with the file rank 0 wrote.
        self.assertFalse(any("1 process" in l for l in rank[1]), "\n".join(rank[1]))
        one = [re.search(r"^1 process: 64 steps, final loss (\d\.\d+); largest difference from 2 workers: (\S+)$", l)
               for l in rank[0]]
        one = [m for m in one if m]
        self.assertEqual(len(one), 1, "\n".join(rank[0]))
        self.assertEqual(one[0].group(1), two[0])
        self.assertLessEqual(float(one[0].group(2)), 1e-5)


if __name__ == "__main__":
    unittest.main()
