"""examples/python/gpt.py written for PyTorch, as a PyTorch user would: the
same character-level GPT, training loop and sampling. Kept to compare the
length of the two scripts (python/tests/test_examples.py); it runs on
Debian's python3-torch.

    python3 examples/python/torch/gpt.py --steps 300
"""
import argparse

import torch
from torch import nn

DIM, HEADS, FF, LAYERS, CTX, BATCH = 128, 4, 512, 2, 64, 32

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
parser.add_argument("--log-every", type=int, default=50)
parser.add_argument("--sample", type=int, default=200, help="characters to generate at the end")
args = parser.parse_args()
dev = args.device


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.mlp = nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, FF), nn.GELU(), nn.Linear(FF, DIM))
        self.register_buffer("mask", torch.triu(torch.ones(CTX, CTX, dtype=torch.bool), 1))

    def forward(self, x):
        h = self.ln1(x)
        n = x.shape[1]
        x = x + self.attn(h, h, h, attn_mask=self.mask[:n, :n], need_weights=False)[0]
        return x + self.mlp(x)


class GPT(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tokens = nn.Embedding(vocab, DIM)
        self.positions = nn.Embedding(CTX, DIM)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln_final = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, vocab, bias=False)

    def forward(self, idx):  # [B, T] -> logits [B, T, vocab]
        x = self.tokens(idx) + self.positions(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.ln_final(self.blocks(x)))


text = open(args.text, "rb").read()
chars = sorted(set(text))
ids = torch.tensor([chars.index(c) for c in text])
print(f"{args.text}: {len(text)} characters, vocabulary {len(chars)}")
torch.manual_seed(1)
model = GPT(len(chars)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
window = torch.arange(CTX + 1)
for step in range(args.steps):
    starts = torch.randint(0, len(text) - CTX - 1, (BATCH, 1))
    chunk = ids[starts + window].to(dev)  # [BATCH, CTX + 1]: random windows of the text
    logits = model(chunk[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(BATCH * CTX, len(chars)), chunk[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % args.log_every == 0 or step + 1 == args.steps:
        print(f"step {step}  loss {loss.item():.4f}", flush=True)

context = ids[:CTX].tolist()
with torch.no_grad():
    for _ in range(args.sample):
        logits = model(torch.tensor([context[-CTX:]], device=dev))
        context.append(torch.multinomial(logits[0, -1].softmax(-1), 1).item())
print(bytes(chars[i] for i in context).decode("utf-8", errors="replace"))
