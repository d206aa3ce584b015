"""A method fixed in a later cell takes effect (issue 30), through a real kernel: every value of the type runs
the new body, made before or after; a step that calls it retraces and says so; a type that changes is declared
anew, what keeps the old one is named, and a cell that would mix them is refused with the cell to run again.

Driven by Debian's jupyter_client against the installed gotrain kernelspec:
    /usr/bin/python3 -m unittest -v tests/jupyter/test_methods.py
"""
import json
import os
import re
import unittest

from jupyter_client.manager import start_new_kernel

TIMEOUT = 180
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class Methods(unittest.TestCase):
    def setUp(self):
        self.km, self.kc = start_new_kernel(kernel_name="gotrain", startup_timeout=60)

    def tearDown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def run_cell(self, code):
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=TIMEOUT, output_hook=outputs.append)
        stream = lambda name: "".join(m["content"]["text"] for m in outputs
                                      if m["msg_type"] == "stream" and m["content"]["name"] == name)
        return reply["content"], stream("stdout"), stream("stderr")

    def ok(self, code):
        content, out, err = self.run_cell(code)
        self.assertEqual(content["status"], "ok", (code, content, err))
        return out, err

    def test_issue_case(self):
        self.ok('import "fmt"\ntype T struct{ n int }\nfunc (t *T) Hello() string { return "old" }\n'
                'type Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello() }\n'
                'box := &Box{&T{}}\ntaken := box.t')
        self.ok('func (t *T) Hello() string { return "new" }')
        out, _ = self.ok('fmt.Println(box.t.Hello(), box.Say(), taken.Hello())\nb2 := &Box{&T{}}\nfmt.Println(b2.t.Hello(), b2.Say())')
        self.assertEqual(out, "new new new\nnew new\n")

    def test_changed_signature(self):
        self.ok('import "fmt"\ntype T struct{ n int }\nfunc (t *T) Hello() string { return "old" }\n'
                'type Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello() }\n'
                'func newBox() *Box { return &Box{&T{}} }\nbox := newBox()')
        _, err = self.ok('func (t *T) Hello(to string) string { return "hello " + to }')
        self.assertIn("these keep the old T until their cells run again: Box, Box.Say, newBox", err)
        self.assertIn("these variables hold values of the old T until the cells that make them run again: box", err)
        content, _, _ = self.run_cell("b2 := newBox()\nfmt.Println(b2.Say())")
        self.assertEqual(content["status"], "error")
        self.assertIn("newBox keeps the old T, which a later cell declared again: run again the cell where newBox is declared",
                      content["evalue"])
        out, _ = self.ok('type Box struct{ t *T }\nfunc (b *Box) Say() string { return b.t.Hello("box") }\n'
                         'func newBox() *Box { return &Box{&T{}} }\nfmt.Println(newBox().Say())')
        self.assertEqual(out, "hello box\n")

    def test_gpt_block_call(self):
        with open(os.path.join(ROOT, "notebooks", "06-gpt.ipynb")) as f:
            cells = ["".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "code"]
        # The notebook's first four cells, smaller: imports, the data, Block and GPT, the model and its
        # validation loss.
        small = [cells[0].replace("const Iterations = 150", "const Iterations = 6"),
                 cells[1].replace("const Context = 64", "const Context = 16"),
                 cells[2],
                 cells[3].replace("const Layers, Heads, Width = 4, 4, 128", "const Layers, Heads, Width = 2, 2, 32")]
        for code in small:
            self.ok(code)
        self.ok('var opt nn.Optimizer\ns.Scope(func() { opt = nn.NewAdam(1e-3) })\n'
                'trainStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {\n'
                '    loss := nn.ComputeAverageLoss(lossObj.Call(y, model.Call(ctx, x, true)), GlobalBatch)\n'
                '    opt.ApplyGradients(ctx, ctx.Gradients(loss, nn.TrainableVariables(model)))\n'
                '    return loss\n}\n'
                'train := s.DistributeDataset(trainWindows.Batch(GlobalBatch))\n'
                'for it := train.Iter(); it.Next(); {\n'
                '    fmt.Printf("loss %.4f\\n", s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch())).Scalar())\n}')
        out, _ = self.ok('fmt.Printf("validation %.6f\\n", validationLoss())')
        before = float(out.split()[-1])
        # The fix: the block's residual branches scaled by a half, and its calls counted.
        _, err = self.ok('calls := 0\n'
                         'func (b *Block) Call(ctx *strategy.ReplicaContext, x *nn.Tensor, training bool) *nn.Tensor {\n'
                         '    calls++\n'
                         '    x = graph.Add(x, graph.Scale(b.attn.Call(ctx, b.ln1.Call(ctx, x, training), training), 0.5))\n'
                         '    return graph.Add(x, graph.Scale(b.down.Call(ctx, b.up.Call(ctx, b.ln2.Call(ctx, x, training), training), training), 0.5))\n'
                         '}')
        self.assertNotIn("declared again", err)
        out, err = self.ok('fmt.Printf("validation %.6f calls %d\\n", validationLoss(), calls)')
        self.assertIn("strategy: retracing evalStep: Block.Call was redefined since it was traced", err)
        m = re.search(r"validation (\S+) calls (\d+)", out)
        after, calls = float(m.group(1)), int(m.group(2))
        self.assertNotAlmostEqual(after, before, places=4, msg="the validation loss did not change with Block.Call")
        replicas = int(self.ok("fmt.Println(s.NumReplicasInSync())")[0])
        self.assertEqual(calls, 2 * replicas, "the new Block.Call runs once per block and replica when the step traces")
        # Training goes on with the new body; a model made after the cell runs it too.
        out, err = self.ok('calls = 0\nit := train.Iter()\nit.Next()\n'
                           'fmt.Printf("loss %.4f calls %d\\n", s.Reduce(strategy.Sum, s.Run(trainStep, it.Batch())).Scalar(), calls)')
        self.assertIn("strategy: retracing trainStep: Block.Call was redefined since it was traced", err)
        self.assertEqual(int(out.split()[-1]), 2 * replicas)
        out, _ = self.ok('calls = 0\nvar fresh *GPT\ns.Scope(func() { fresh = newGPT(vocab.Size()) })\n'
                         'freshStep := func(ctx *strategy.ReplicaContext, x, y *nn.Tensor) *nn.Tensor {\n'
                         '    return nn.ComputeAverageLoss(lossObj.Call(y, fresh.Call(ctx, x, false)), GlobalBatch)\n}\n'
                         'it.Next()\ns.Run(freshStep, it.Batch())\nfmt.Println("calls", calls)')
        self.assertEqual(int(out.split()[-1]), 2 * replicas)


if __name__ == "__main__":
    unittest.main()
