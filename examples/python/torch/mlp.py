"""examples/python/mlp.py written for PyTorch, as a PyTorch user would:
the same model, optimizer, batches and report. Kept to compare the length
of the two scripts (python/tests/test_examples.py); it runs on Debian's
python3-torch.

    python3 examples/python/torch/mlp.py --epochs 1
"""
import argparse
import gzip
import time

import numpy as np
import torch
from torch import nn

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--steps", type=int, default=0, help="at most N steps per epoch (0: all)")
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
parser.add_argument("--log-every", type=int, default=50)
args = parser.parse_args()


def fashion_mnist(kind):
    with gzip.open(f"{args.data}/{kind}-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{args.data}/{kind}-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return torch.utils.data.TensorDataset(torch.tensor(images / 255.0, dtype=torch.float32),
                                          torch.tensor(labels, dtype=torch.long))


torch.manual_seed(args.seed)
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10)).to(args.device)
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
train = torch.utils.data.DataLoader(fashion_mnist("train"), batch_size=args.batch_size, shuffle=True)
test = torch.utils.data.DataLoader(fashion_mnist("t10k"), batch_size=1000)

for epoch in range(1, args.epochs + 1):
    start = time.perf_counter()
    for step, (x, y) in enumerate(train):
        if args.steps and step == args.steps:
            break
        x, y = x.to(args.device), y.to(args.device)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if step % args.log_every == 0 or step + 1 == args.steps:
            print(f"step {step}  loss {loss.item():.9f}", flush=True)
    model.eval()
    with torch.no_grad():
        correct = sum((model(x.to(args.device)).argmax(1).cpu() == y).sum().item() for x, y in test)
    model.train()
    print(f"epoch {epoch}: test accuracy {100 * correct / len(test.dataset):.2f}%  "
          f"epoch time {time.perf_counter() - start:.2f} s")
