#!/usr/bin/python3
"""PyTorch (CPU, Debian python3-torch) reference for gotrain bench resnet: the same small ResNet as
models/resnet (a 3x3 stem, 3 stages of 2 basic blocks 16, 32 and 64 wide, 1x1 projected shortcuts, batch norm,
global average pooling, a dense head), one training step (forward, backward, Adam) on random 28x28 images.
--channels-last keeps activations NHWC (PyTorch's fastest CPU layout, through oneDNN); --ddp N trains on N processes
of --threads threads each under DistributedDataParallel (gloo on loopback), each on its share of the batch, with
batch norm per process (PyTorch's SyncBatchNorm needs CUDA). Prints one line, samples/s of the whole batch, which
gotrain bench resnet reads.
usage: torch_resnet.py [--threads 2] [--batch 128] [--steps 30] [--stem-stride 1] [--channels-last] [--ddp N]"""
import argparse, os, socket, time
p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=2); p.add_argument("--batch", type=int, default=128)
p.add_argument("--steps", type=int, default=30); p.add_argument("--warmup", type=int, default=3)
p.add_argument("--stem-stride", type=int, default=1)
p.add_argument("--channels-last", action="store_true"); p.add_argument("--ddp", type=int, default=0)
a = p.parse_args()
import torch, torch.nn as nn, torch.distributed as dist, torch.multiprocessing as mp

# Same output sizes and work as gotrain's Same padding; PyTorch pads a stride-2 3x3 window on both sides where
# TensorFlow pads the bottom and right only, which moves the window by a pixel but not its cost.
def conv(cin, cout, k, s):
    return nn.Conv2d(cin, cout, k, stride=s, padding=k // 2, bias=False)

class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = conv(cin, cout, 3, stride), nn.BatchNorm2d(cout, eps=1e-3)
        self.conv2, self.bn2 = conv(cout, cout, 3, 1), nn.BatchNorm2d(cout, eps=1e-3)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout, eps=1e-3))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu((x if self.proj is None else self.proj(x)) + h)

class ResNet(nn.Module):
    def __init__(self, widths=(16, 32, 64), blocks=2, classes=10, stem_stride=1):
        super().__init__()
        self.stem = nn.Sequential(conv(1, widths[0], 3, stem_stride), nn.BatchNorm2d(widths[0], eps=1e-3), nn.ReLU())
        layers, cin = [], widths[0]
        for s, w in enumerate(widths):
            for i in range(blocks):
                layers.append(Block(cin, w, 2 if s > 0 and i == 0 else 1))
                cin = w
        self.blocks = nn.Sequential(*layers)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))

def train(rank, world, port, out):
    """Times the steps on one process; with world > 0, rank of world under DDP. Rank 0 reports on out."""
    torch.set_num_threads(a.threads); torch.manual_seed(0)
    m = ResNet(stem_stride=a.stem_stride)
    params = sum(p.numel() for p in m.parameters())
    fmt = torch.channels_last if a.channels_last else torch.contiguous_format
    m = m.to(memory_format=fmt)
    batch = a.batch
    if world:
        if a.batch % world:
            raise SystemExit(f"torch_resnet.py: --batch {a.batch} does not split among {world} processes")
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
        m, batch = nn.parallel.DistributedDataParallel(m), a.batch // world
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    loss_fn = nn.CrossEntropyLoss()
    torch.manual_seed(rank)
    x = torch.randn(batch, 1, 28, 28).contiguous(memory_format=fmt); y = torch.randint(0, 10, (batch,))
    for i in range(a.steps + a.warmup):
        if i == a.warmup:
            if world: dist.barrier()
            t = time.perf_counter()
        opt.zero_grad(); loss = loss_fn(m(x), y); loss.backward(); opt.step()
    if world: dist.barrier()
    el = time.perf_counter() - t
    if rank == 0:
        print(f"torch resnet: {params} params, threads {a.threads}, batch {a.batch}, stem stride {a.stem_stride}, "
              f"channels_last {a.channels_last}, ddp {world}: {a.steps * a.batch / el:.0f} samples/s, "
              f"{1000 * el / a.steps:.1f} ms/step", file=out, flush=True)
    if world: dist.destroy_process_group()

def ddp_rank(rank, world, port):
    import sys
    train(rank, world, port, sys.stdout)

if __name__ == "__main__":
    import sys
    if a.ddp:
        with socket.socket() as s:  # a free loopback port for the rendezvous
            s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        mp.start_processes(ddp_rank, args=(a.ddp, port), nprocs=a.ddp, start_method="fork")
    else:
        train(0, 0, 0, sys.stdout)
