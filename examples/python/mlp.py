"""The Fashion-MNIST MLP (784-512-512-10, Adam) in Python, step for step the
training of `lazytensor-train --model mlp`: same seed, initialization,
batch order and update, so the same losses.

    python3 examples/python/mlp.py --device lazy --epochs 1
"""
import argparse
import time

import lazytensor as lt
from lazytensor import nn

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--device", default="lazy", choices=["cpu", "lazy"])
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--steps", type=int, default=0, help="at most N steps per epoch (0: all)")
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--data", default=lt.data.FASHION_MNIST_DIR)
parser.add_argument("--log-every", type=int, default=50)
args = parser.parse_args()

lt.manual_seed(args.seed)
dev = args.device
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512, device=dev), nn.ReLU(),
                      nn.Linear(512, 512, device=dev), nn.ReLU(), nn.Linear(512, 10, device=dev))
opt = lt.optim.Adam(model.parameters(), lr=args.lr)
train = lt.data.fashion_mnist(args.data, train=True)
test = lt.data.fashion_mnist(args.data, train=False)

for epoch in range(1, args.epochs + 1):
    train.shuffle(args.seed + epoch)
    start = time.perf_counter()
    for step, (x, y) in enumerate(train.batches(args.batch_size, dev)):
        if args.steps and step == args.steps:
            break
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        lt.mark_step()
        if step % args.log_every == 0 or step + 1 == args.steps:
            print(f"step {step}  loss {loss.item():.9f}", flush=True)
    model.eval()
    with lt.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in test.batches(1000, dev))
    model.train()
    print(f"epoch {epoch}: test accuracy {100 * correct / len(test):.2f}%  "
          f"epoch time {time.perf_counter() - start:.2f} s")
