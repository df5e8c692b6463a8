"""Per-op cost from Python, side by side in one run: `x = x * 1.0001 + 0.5`
on 4 elements with lazytensor (cpu, and lazy: tracing only, one barrier at
the end) and with torch eager. Prints medians of several repeats (ns per
op) and the ratios; a figure, not a pass/fail test.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/overhead.py
"""
import statistics
import time

import torch

import lazytensor as lt

OPS_PER_ITER = 2


def per_op_ns(make, n, repeats=7):
    times = []
    for _ in range(repeats):
        x = make()
        start = time.perf_counter_ns()
        for _ in range(n):
            x = x * 1.0001 + 0.5
        times.append((time.perf_counter_ns() - start) / (n * OPS_PER_ITER))
        if isinstance(x, lt.Tensor) and x.device.type == "lazy":
            lt.mark_step()
    return statistics.median(times)


def main():
    torch.set_num_threads(1)
    n = 2000
    rows = [
        ("torch eager (cpu)", per_op_ns(lambda: torch.ones(4), n)),
        ("lazytensor cpu", per_op_ns(lambda: lt.ones(4), n)),
        ("lazytensor lazy (tracing)", per_op_ns(lambda: lt.ones(4, device="lazy"), n)),
    ]
    base = rows[0][1]
    print(f"{'x = x * 1.0001 + 0.5 on 4 elements':34s} {'ns/op':>8s} {'vs torch':>9s}")
    for name, ns in rows:
        print(f"{name:34s} {ns:8.0f} {ns / base:8.2f}x")


if __name__ == "__main__":
    main()
