#!/usr/bin/python3
"""Writes nn/testdata/torch_rnn.json: fixed weights, inputs, and the outputs
and final states torch.nn.LSTM and torch.nn.GRU compute from them, in
float64, for nn's TestRecurrentMatchesTorch (issue 23). Run once from the
repository root with Debian's python3-torch:

    /usr/bin/python3 scripts/torch_rnn_reference.py

Weights are stored as torch keeps them (weight_ih_l0 [gates*units, features],
weight_hh_l0, bias_ih_l0, bias_hh_l0, gate order LSTM i,f,g,o, GRU r,z,n);
the Go test maps them to Keras's layout.
"""
import json

import torch


def tensor(t):
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().reshape(-1).tolist()]}


def case(name, kind, batch, time, features, units, initial=False, bidirectional=False, lengths=None):
    cls = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[kind]
    layer = cls(features, units, batch_first=True, bidirectional=bidirectional).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.uniform_(-0.6, 0.6)
    x = torch.randn(batch, time, features, dtype=torch.float64)
    dirs = 2 if bidirectional else 1
    h0 = torch.randn(dirs, batch, units, dtype=torch.float64) if initial else None
    c0 = torch.randn(dirs, batch, units, dtype=torch.float64) if initial and kind == "lstm" else None
    state = None
    if initial:
        state = (h0, c0) if kind == "lstm" else h0
    inp = x
    if lengths is not None:
        inp = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
    out, st = layer(inp, state)
    if lengths is not None:
        out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=time)
    res = {"name": name, "kind": kind, "units": units, "bidirectional": bidirectional,
           "x": tensor(x), "output": tensor(out)}
    if lengths is not None:
        res["lengths"] = lengths
    if kind == "lstm":
        res["h_n"], res["c_n"] = tensor(st[0]), tensor(st[1])
    else:
        res["h_n"] = tensor(st)
    if initial:
        res["h0"] = tensor(h0)
        if c0 is not None:
            res["c0"] = tensor(c0)
    weights = {}
    for n, p in layer.named_parameters():
        weights[n] = tensor(p)
    res["weights"] = weights
    return res


def main():
    torch.manual_seed(23)
    cases = [
        case("lstm", "lstm", 2, 5, 3, 4),
        case("lstm-initial", "lstm", 3, 4, 2, 3, initial=True),
        case("gru", "gru", 2, 5, 3, 4),
        case("gru-initial", "gru", 3, 4, 2, 3, initial=True),
        case("gru-bidirectional", "gru", 2, 6, 3, 4, bidirectional=True),
        case("lstm-bidirectional", "lstm", 2, 3, 2, 3, bidirectional=True),
        # Packed sequences of 4 and 2 real steps of 5: outputs past a
        # sequence's end are zeros and h_n is its last real step's.
        case("gru-bidirectional-packed", "gru", 2, 5, 3, 4, bidirectional=True, lengths=[4, 2]),
        case("lstm-packed", "lstm", 3, 5, 2, 3, lengths=[5, 3, 1]),
    ]
    with open("nn/testdata/torch_rnn.json", "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
