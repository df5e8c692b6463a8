"""Per-op cost from Python, side by side in one run: `x = x * 1.0001 + 0.5`
on 4 elements with lazytensor (cpu, and lazy: tracing only, one barrier at
the end of each repeat, not timed) and with torch eager. The three take
turns repeat by repeat (interleaved, so a change in the machine's load
hits all of them), and each figure is the median over repeats of the
time per op: wall clock, and the thread's CPU time (which a machine
shared with other busy processes inflates less). Prints ns per op and the
ratios to torch; a figure, not a pass/fail test.

    PYTHONPATH=build/python /usr/bin/python3 bench/python/overhead.py
"""
import statistics
import time

import torch

import lazytensor as lt

OPS_PER_ITER = 2
N = 2000  # iterations per repeat
REPEATS = 15


def one_repeat(make):
    """(wall ns, CPU ns) per op of N iterations."""
    x = make()
    wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(N):
        x = x * 1.0001 + 0.5
    cpu, wall = time.thread_time_ns() - cpu, time.perf_counter_ns() - wall
    if isinstance(x, lt.Tensor) and x.device.type == "lazy":
        lt.mark_step()
    return wall / (N * OPS_PER_ITER), cpu / (N * OPS_PER_ITER)


def main():
    torch.set_num_threads(1)
    rows = [
        ("torch eager (cpu)", lambda: torch.ones(4)),
        ("lazytensor cpu", lambda: lt.ones(4)),
        ("lazytensor lazy (tracing)", lambda: lt.ones(4, device="lazy")),
    ]
    for _, make in rows:  # warm up: first calls, the lazy device's first program
        one_repeat(make)
    samples = {name: [] for name, _ in rows}
    for _ in range(REPEATS):
        for name, make in rows:
            samples[name].append(one_repeat(make))
    medians = {name: (statistics.median(w for w, _ in s), statistics.median(c for _, c in s))
               for name, s in samples.items()}
    base_wall, base_cpu = medians[rows[0][0]]
    print(f"{'x = x * 1.0001 + 0.5 on 4 elements':34s} {'wall ns/op':>10s} {'vs torch':>9s} "
          f"{'CPU ns/op':>10s} {'vs torch':>9s}")
    for name, _ in rows:
        wall, cpu = medians[name]
        print(f"{name:34s} {wall:10.0f} {wall / base_wall:8.2f}x {cpu:10.0f} {cpu / base_cpu:8.2f}x")


if __name__ == "__main__":
    main()
