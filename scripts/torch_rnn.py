#!/usr/bin/python3
"""The PyTorch twin of `gotrain bench rnn` (issue 23): a character GRU
(embedding, one GRU layer returning every step, a dense layer per step to
the vocabulary) trained with Adam and sparse cross-entropy on random
windows of ids, on one process with --threads intra-op threads. Prints one
line, `torch rnn: ... samples/s X`, that the Go bench reads.
"""
import argparse
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--embd", type=int, default=32)
    p.add_argument("--units", type=int, default=128)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(a.vocab, a.embd)
            self.gru = torch.nn.GRU(a.embd, a.units, batch_first=True)
            self.out = torch.nn.Linear(a.units, a.vocab)

        def forward(self, x):
            h, _ = self.gru(self.emb(x))
            return self.out(h)

    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    text = torch.randint(0, a.vocab, (20000,))

    def batch():
        i = torch.randint(0, len(text) - a.seq - 1, (a.batch,))
        x = torch.stack([text[j:j + a.seq] for j in i])
        y = torch.stack([text[j + 1:j + a.seq + 1] for j in i])
        return x, y

    def step(x, y):
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, a.vocab), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(a.warmup):
        step(*batch())
    start = time.perf_counter()
    for _ in range(a.steps):
        loss = step(*batch())
    loss = float(loss)
    el = time.perf_counter() - start
    print(f"torch rnn: torch {torch.__version__}, threads {a.threads}, batch {a.batch}, seq {a.seq}, units {a.units}: "
          f"{1000 * el / a.steps:.2f} ms/step, loss {loss:.4f}, samples/s {a.steps * a.batch / el:.1f}")


if __name__ == "__main__":
    main()
