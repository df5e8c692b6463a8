"""A character-level GPT (2 pre-LN blocks of the C library's layers) trained
on a text, then sampled: examples/gpt.c in Python.

    python3 examples/python/gpt.py --device lazy --steps 300
"""
import argparse

import lazytensor as lt
from lazytensor import nn

DIM, HEADS, FF, LAYERS, CTX, BATCH = 128, 4, 512, 2, 64, 32  # examples/gpt.c's sizes

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default="lazy", choices=["cpu", "lazy"])
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--text", default="/usr/share/common-licenses/GPL-3")
parser.add_argument("--log-every", type=int, default=50)
parser.add_argument("--sample", type=int, default=200, help="characters to generate at the end")
args = parser.parse_args()
dev = args.device


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM, device=dev)
        self.attn = nn.SelfAttention(DIM, HEADS, causal=True, device=dev)
        self.mlp = nn.Sequential(nn.LayerNorm(DIM, device=dev), nn.Linear(DIM, FF, device=dev), nn.GELU(),
                                 nn.Linear(FF, DIM, device=dev))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(x)


class GPT(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tokens = nn.Embedding(vocab, DIM, device=dev)
        self.positions = nn.Embedding(CTX, DIM, device=dev)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln_final = nn.LayerNorm(DIM, device=dev)
        self.head = nn.Linear(DIM, vocab, bias=False, device=dev)
        self.where = lt.arange(CTX, device=dev)

    def forward(self, idx):  # [B, CTX] -> logits [B, CTX, vocab]
        x = self.tokens(idx) + self.positions(self.where)
        return self.head(self.ln_final(self.blocks(x)))


text = open(args.text, "rb").read()
chars = sorted(set(text))
ids = lt.tensor([chars.index(c) for c in text])
print(f"{args.text}: {len(text)} characters, vocabulary {len(chars)}")
lt.manual_seed(1)
model = GPT(len(chars))
opt = lt.optim.Adam(model.parameters(), lr=1e-3)
window = lt.arange(CTX + 1)
for step in range(args.steps):
    starts = lt.randint(0, len(text) - CTX - 1, (BATCH, 1))
    chunk = ids[starts + window].to(dev)  # [BATCH, CTX + 1]: random windows of the text
    logits = model(chunk[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(BATCH * CTX, len(chars)), chunk[:, 1:].reshape(-1))
    loss.backward()
    opt.step()
    opt.zero_grad()
    lt.mark_step()
    if step % args.log_every == 0 or step + 1 == args.steps:
        print(f"step {step}  loss {loss.item():.4f}", flush=True)

context = ids[:CTX].tolist()
with lt.no_grad():
    for _ in range(args.sample):
        logits = model(lt.tensor([context[-CTX:]], device=dev))
        context.append(lt.multinomial(logits[0, -1].softmax(-1), 1).item())
print(bytes(chars[i] for i in context).decode("utf-8", errors="replace"))
