#!/usr/bin/python3
"""Writes the PyTorch twins of models/gpt and models/resnet for their
safetensors tests (issue 33): each model's weights as safetensors and its
outputs on fixed inputs. Run once from the repository root with Debian's
python3-torch:

    /usr/bin/python3 scripts/torch_safetensors.py

It writes

    models/gpt/testdata/torch_gpt.safetensors     nanoGPT's state_dict names
    models/gpt/testdata/torch_gpt.json            config, token ids, logits
    models/resnet/testdata/torch_resnet.safetensors
    models/resnet/testdata/torch_resnet.json      config, images, logits

The safetensors files are written by hand below (struct and json, as the
format describes), since the safetensors package is not in Debian. Weights
are float32; the outputs are computed in float64 from those float32 values,
so a float64 gotrain model can be held to a tighter tolerance than a
float32 one.

The GPT is nanoGPT's (github.com/karpathy/nanoGPT model.py) with bias=True:
the same module names (transformer.wte, transformer.h.0.attn.c_attn, ...),
LayerNorm eps 1e-5, exact (erf) GELU, a fused q/k/v projection and lm_head
tied to wte (both names are in the state_dict, as nanoGPT saves them).

The ResNet is the module of shared/bench/torch_resnet.py (stem.0 conv,
stem.1 batch norm, body.N.c1/b1/c2/b2, body.N.short.0/1 where a block
changes shape, head; batch norm eps 1e-3), smaller: widths 4, 8, 16, one
block per stage. PyTorch pads a 3x3 convolution by 1 on each side where
gotrain's "same" padding pads a stride-2 convolution of an even size by 0
before and 1 after; the images are 9x9, so that every stride-2 convolution
sees an odd size (9, then 5), where the two paddings agree.
"""
import json
import math
import os
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}


def save_safetensors(path, tensors):
    """Writes tensors (name -> tensor, in order) as a safetensors file."""
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().contiguous().numpy().tobytes()  # little-endian: checked in main
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(8 + len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def randomize(model):
    """Weights of a size that makes every part matter to the outputs."""
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif p.dim() == 1:  # norm scales
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p[0].numel()))
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.2 * torch.randn(b.shape, generator=g))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape, generator=g))
            elif name.endswith("num_batches_tracked"):
                b.fill_(12)


# nanoGPT's modules, with its names.
class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = nn.Linear(c["width"], 3 * c["width"])
        self.c_proj = nn.Linear(c["width"], c["width"])
        self.heads = c["heads"]

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["width"], 4 * c["width"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["width"], c["width"])

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c["width"], eps=1e-5)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = nn.LayerNorm(c["width"], eps=1e-5)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab"], c["width"]),
            wpe=nn.Embedding(c["context"], c["width"]),
            h=nn.ModuleList([Block(c) for _ in range(c["layers"])]),
            ln_f=nn.LayerNorm(c["width"], eps=1e-5),
        ))
        self.lm_head = nn.Linear(c["width"], c["vocab"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT

    def forward(self, idx):
        t = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(t))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


# shared/bench/torch_resnet.py's modules, with its names.
def conv(cin, cout, k, stride):
    return nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False)


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1, self.b1 = conv(cin, cout, 3, stride), nn.BatchNorm2d(cout, eps=1e-3)
        self.c2, self.b2 = conv(cout, cout, 3, 1), nn.BatchNorm2d(cout, eps=1e-3)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout, eps=1e-3))

    def forward(self, x):
        h = F.relu(self.b1(self.c1(x)))
        h = self.b2(self.c2(h))
        return F.relu((x if self.short is None else self.short(x)) + h)


class Net(nn.Module):
    def __init__(self, widths, per_stage, classes):
        super().__init__()
        self.stem = nn.Sequential(conv(1, widths[0], 3, 1), nn.BatchNorm2d(widths[0], eps=1e-3), nn.ReLU())
        blocks, cin = [], widths[0]
        for i, w in enumerate(widths):
            for j in range(per_stage):
                blocks.append(Basic(cin, w, 2 if i > 0 and j == 0 else 1))
                cin = w
        self.body = nn.Sequential(*blocks)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        return self.head(self.body(self.stem(x)).mean(dim=(2, 3)))


def outputs(model, x):
    """The model's outputs in float64 from its float32 weights."""
    m64 = model.double().eval()
    with torch.no_grad():
        y = m64(x.double() if x.is_floating_point() else x)
    model.float()
    return y


def write(folder, name, tensors, doc):
    os.makedirs(folder, exist_ok=True)
    save_safetensors(os.path.join(folder, name + ".safetensors"), tensors)
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


def main():
    assert sys.byteorder == "little", "safetensors data is little-endian"
    torch.manual_seed(0)
    gc = {"vocab": 13, "context": 8, "layers": 2, "heads": 2, "width": 16}
    gpt = GPT(gc)
    randomize(gpt)
    gpt.eval()
    ids = torch.randint(0, gc["vocab"], (2, gc["context"]), generator=torch.Generator().manual_seed(3))
    logits = outputs(gpt, ids)
    sd = gpt.state_dict()  # holds lm_head.weight and transformer.wte.weight, one tensor
    write("models/gpt/testdata", "torch_gpt", {k: v.float() for k, v in sd.items()}, {
        "config": gc, "ids": ids.reshape(-1).tolist(), "ids_shape": list(ids.shape),
        "logits": logits.reshape(-1).tolist(), "logits_shape": list(logits.shape)})

    rc = {"widths": [4, 8, 16], "blocks": 1, "classes": 3, "size": 9}
    net = Net(rc["widths"], rc["blocks"], rc["classes"])
    randomize(net)
    net.eval()
    x = torch.randn(2, 1, rc["size"], rc["size"], generator=torch.Generator().manual_seed(4))
    y = outputs(net, x)
    write("models/resnet/testdata", "torch_resnet", {k: (v if v.dtype == torch.int64 else v.float()) for k, v in net.state_dict().items()}, {
        # One channel: NCHW and NHWC images hold the same values in the same order.
        "config": rc, "images": x.double().reshape(-1).tolist(), "images_shape": [2, rc["size"], rc["size"], 1],
        "logits": y.reshape(-1).tolist(), "logits_shape": list(y.shape)})


if __name__ == "__main__":
    main()
