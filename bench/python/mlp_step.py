"""An MLP training step (Fashion-MNIST, 784-512-512-10, Adam, batch 128)
from Python against the same step from C, side by side in one run.

Rounds alternate: STEPS steps of examples/python/mlp.py's step in this
process, then `lazytensor-train --model mlp` (the C trainer) for STEPS
steps in a child process, whose median step time it prints. Both time a
step the same way: batch, forward, loss, backward, Adam, zero_grad, the
step barrier, and reading the loss. Prints the median over rounds of each
round's median (ms per step), the ratio of the two, and the median of
the ratios of neighbouring rounds (which cancels slow drifts in the load
of a shared machine); then the slowest Python steps and how many cycle
collections ran during them. A figure, not a pass/fail test. LT_NUM_THREADS
applies to both sides (1 keeps a busy machine's noise down).

    LT_NUM_THREADS=1 PYTHONPATH=build/python /usr/bin/python3 bench/python/mlp_step.py [--device lazy|cpu]
"""
import argparse
import gc
import os
import re
import statistics
import subprocess
import time

import lazytensor as lt
from lazytensor import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def python_round(model, opt, batches, steps, dev):
    """The times (ms) of `steps` training steps, as mlp.py makes them."""
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        x, y = next(batches)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        lt.mark_step()
        loss.item()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def c_round(trainer, steps, dev):
    """The C trainer's median step time (ms) over `steps` steps."""
    out = subprocess.run([trainer, "--model", "mlp", "--device", dev, "--epochs", "1", "--steps", str(steps),
                          "--quiet"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"step time: median ([0-9.]+) ms", out).group(1))


def endless_batches(data, dev, seed):
    epoch = 0
    while True:
        epoch += 1
        data.shuffle(seed + epoch)
        yield from data.batches(128, dev)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="lazy", choices=["cpu", "lazy"])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--steps", type=int, default=10, help="steps per round and side")
    parser.add_argument("--trainer", default=os.path.join(ROOT, "build", "lazytensor-train"))
    args = parser.parse_args()
    dev = args.device

    lt.manual_seed(1)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512, device=dev), nn.ReLU(),
                          nn.Linear(512, 512, device=dev), nn.ReLU(), nn.Linear(512, 10, device=dev))
    opt = lt.optim.Adam(model.parameters(), lr=1e-3)
    batches = endless_batches(lt.data.fashion_mnist(), dev, 1)
    python_round(model, opt, batches, 3, dev)  # compiles (or loads) the step's programs
    c_round(args.trainer, 3, dev)

    py, c, steps = [], [], []
    collections = sum(g["collections"] for g in gc.get_stats())
    for _ in range(args.rounds):
        steps += python_round(model, opt, batches, args.steps, dev)
        py.append(statistics.median(steps[-args.steps:]))
        c.append(c_round(args.trainer, args.steps, dev))
    collections = sum(g["collections"] for g in gc.get_stats()) - collections
    py_ms, c_ms = statistics.median(py), statistics.median(c)
    print(f"MLP training step on {dev}, batch 128, {args.rounds} interleaved rounds of {args.steps} steps")
    print(f"  C (lazytensor-train)   {c_ms:7.2f} ms   rounds: {' '.join(f'{v:.2f}' for v in c)}")
    print(f"  Python (lazytensor)    {py_ms:7.2f} ms   rounds: {' '.join(f'{v:.2f}' for v in py)}")
    paired = statistics.median(p / q for p, q in zip(py, c))
    print(f"  Python / C: {py_ms / c_ms:.3f} (medians), {paired:.3f} (median of paired rounds)")
    # the slowest Python steps, and the cycle collections (any generation)
    # that ran during them: with tensors tracked by the collector, every
    # few hundred tensors kept alive trigger one
    print(f"  Python steps: max {max(steps):.2f} ms, 3rd largest {sorted(steps)[-3]:.2f} ms; "
          f"{collections} cycle collections in {len(steps)} steps")


if __name__ == "__main__":
    main()
