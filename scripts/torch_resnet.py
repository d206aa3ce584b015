#!/usr/bin/python3
"""PyTorch (CPU, Debian python3-torch) reference for gotrain bench resnet: the same small ResNet as
models/resnet (a 3x3 stem, 3 stages of 2 basic blocks 16, 32 and 64 wide, 1x1 projected shortcuts, batch norm,
global average pooling, a dense head), one training step (forward, backward, Adam) on random 28x28 images.
Prints one line, samples/s, which gotrain bench resnet reads.
usage: torch_resnet.py [--threads 2] [--batch 128] [--steps 30] [--stem-stride 1]"""
import argparse, time
p = argparse.ArgumentParser()
p.add_argument("--threads", type=int, default=2); p.add_argument("--batch", type=int, default=128)
p.add_argument("--steps", type=int, default=30); p.add_argument("--warmup", type=int, default=3)
p.add_argument("--stem-stride", type=int, default=1)
a = p.parse_args()
import torch, torch.nn as nn

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

torch.set_num_threads(a.threads); torch.manual_seed(0)
m = ResNet(stem_stride=a.stem_stride)
params = sum(p.numel() for p in m.parameters())
opt = torch.optim.Adam(m.parameters(), 1e-3)
loss_fn = nn.CrossEntropyLoss()
x = torch.randn(a.batch, 1, 28, 28); y = torch.randint(0, 10, (a.batch,))
for i in range(a.steps + a.warmup):
    if i == a.warmup: t = time.perf_counter()
    opt.zero_grad(); loss = loss_fn(m(x), y); loss.backward(); opt.step()
el = time.perf_counter() - t
print(f"torch resnet: {params} params, threads {a.threads}, batch {a.batch}, stem stride {a.stem_stride}: "
      f"{a.steps * a.batch / el:.0f} samples/s, {1000 * el / a.steps:.1f} ms/step")
