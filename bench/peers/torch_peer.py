#!/usr/bin/env python3
"""torch peer of bench/peers: the five training steps in PyTorch, run as

    torch_peer.py --mode eager|compile|xla [--threads N]

and driven over stdin/stdout (see peer_common.py).

  eager    plain PyTorch on the CPU
  compile  torch.compile: the forward + loss is one compiled function (its
           backward compiled by AOTAutograd) and optimizer.step() another,
           as PyTorch's tutorials do it; inductor's cache goes where
           TORCHINDUCTOR_CACHE_DIR points (the driver gives a fresh folder)
  xla      torch_xla on the PJRT CPU device: each step ends with
           torch_xla.sync() (the step barrier) and waits for the device

The models match bench/peers_step.c op for op: attention is written out
(softmax(q k^T / sqrt(d_head)) v, causal mask by masked_fill with -inf), GELU
is the exact erf form, layer norm eps 1e-5.
"""
import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_common as pc  # noqa: E402


class Attention(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = (p.reshape(b, t, h, d // h).transpose(1, 2) for p in self.qkv(x).split(d, dim=2))
        scores = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(d // h))
        if self.causal:
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.out(y)


class Block(nn.Module):
    """bench/train_step's block: x + attn(ln1 x), then + fc2(gelu(fc1(ln2 h)))."""

    def __init__(self, d, heads, ffn, causal):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attention(d, heads, causal)
        self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, ffn), nn.Linear(ffn, d)

    def forward(self, x):
        h = x + self.attn(self.ln1(x))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(pc.GPT_VOCAB, pc.GPT_DIM)
        self.pos = nn.Embedding(pc.GPT_CTX, pc.GPT_DIM)
        self.blocks = nn.Sequential(*[Block(pc.GPT_DIM, pc.GPT_HEADS, pc.GPT_FF, True) for _ in range(pc.GPT_LAYERS)])
        self.ln_f = nn.LayerNorm(pc.GPT_DIM)
        self.head = nn.Linear(pc.GPT_DIM, pc.GPT_VOCAB, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.shape[1], device=idx.device)
        return self.head(self.ln_f(self.blocks(self.tok(idx) + self.pos(positions))))


class MnistNet(nn.Module):
    """The network of PyTorch's MNIST example."""

    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def mlp():
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def build(workload):
    """(model, inputs, targets, loss(model, x, y), optimizer factory)"""
    torch.manual_seed(0)
    adam = lambda p: torch.optim.Adam(p, lr=1e-3)  # noqa: E731
    if workload in ("mlp_sgd", "mlp_adam"):
        sgd = lambda p: torch.optim.SGD(p, lr=0.01)  # noqa: E731
        return (mlp(), torch.randn(128, 784), torch.randint(0, 10, (128,)),
                lambda m, x, y: F.cross_entropy(m(x), y), sgd if workload == "mlp_sgd" else adam)
    if workload == "transformer":
        return (Block(256, 4, 1024, False), torch.randn(16, 128, 256), None,
                lambda m, x, y: m(x).square().mean(), adam)
    if workload == "gpt":
        tokens = torch.randint(0, pc.GPT_VOCAB, (pc.GPT_BATCH, pc.GPT_CTX + 1))
        adamw = lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01)  # noqa: E731
        return (GPT(), tokens[:, :-1].contiguous(), tokens[:, 1:].reshape(-1).contiguous(),
                lambda m, x, y: F.cross_entropy(m(x).reshape(-1, pc.GPT_VOCAB), y), adamw)
    return (MnistNet(), torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,)),
            lambda m, x, y: F.nll_loss(m(x), y), adam)


def make_step_factory(mode):
    device = torch.device("cpu")
    sync = lambda: None  # noqa: E731
    if mode == "xla":
        import torch_xla
        import torch_xla.core.xla_model as xm
        device = torch_xla.device() if hasattr(torch_xla, "device") else xm.xla_device()
        mark = torch_xla.sync if hasattr(torch_xla, "sync") else xm.mark_step

        def sync():
            mark()
            xm.wait_device_ops()

    def make_step(workload):
        model, x, y, loss_of, make_opt = build(workload)
        model = model.to(device).train()
        x = x.to(device)
        y = y.to(device) if y is not None else None
        opt = make_opt(model.parameters())
        forward = lambda: loss_of(model, x, y)  # noqa: E731
        update = opt.step
        if mode == "compile":
            forward = torch.compile(forward)
            update = torch.compile(opt.step)

        def step():
            opt.zero_grad(set_to_none=True)
            forward().backward()
            update()
            sync()
        return step
    return make_step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("eager", "compile", "xla"), required=True)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    info = {"torch": torch.__version__, "python": sys.version.split()[0], "threads": torch.get_num_threads()}
    if args.mode == "xla":
        import torch_xla
        info["torch_xla"] = torch_xla.__version__
        info["pjrt_device"] = os.environ.get("PJRT_DEVICE", "")
    name = args.name or {"eager": "torch", "compile": "compile", "xla": "xla"}[args.mode]
    pc.serve(name, make_step_factory(args.mode), info, {"threads": torch.get_num_threads()})


if __name__ == "__main__":
    main()
