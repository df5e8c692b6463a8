"""The command loop every peer process of bench/peers runs.

A peer process serves one system. It reads commands from stdin, one a line,
and answers each with one JSON line on stdout (the protocol of
bench/peers_step --serve):

    run <workload> <steps> <warmup>
    quit

The first `run` of a workload builds its model and times its first two steps
alone (cold: tracing and compiling included), then every run times `warmup`
untimed-for-the-median steps and `steps` steps whose median it reports.
Models stay alive between runs, so later rounds are warm. On start the
process prints one line {"system": ..., "ready": true, ...} with versions.
Only the standard library is used here, so the torch and jax environments
can both import it.
"""
import json
import statistics
import sys
import time
import traceback

WORKLOADS = ("mlp_sgd", "mlp_adam", "transformer", "gpt", "mnist_cnn")

# GPT shapes (as bench/peers_step.c)
GPT_LAYERS, GPT_DIM, GPT_HEADS, GPT_CTX, GPT_BATCH, GPT_FF, GPT_VOCAB = 2, 128, 4, 64, 32, 512, 96


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def timed_ms(step):
    t0 = time.perf_counter()
    step()
    return (time.perf_counter() - t0) * 1e3


def run(system, runners, make_step, workload, steps, warmup, extra):
    """One `run` command: the JSON answer as a dict."""
    out = {"system": system, "workload": workload}
    out.update(extra)
    if workload not in runners:
        runners[workload] = make_step(workload)
        out["cold_ms"] = timed_ms(runners[workload])
        out["second_ms"] = timed_ms(runners[workload])
    step = runners[workload]
    for _ in range(warmup):
        step()
    times = [timed_ms(step) for _ in range(steps)]
    out["steps"] = steps
    out["median_ms"] = statistics.median(times)
    return out


def serve(system, make_step, ready_info, extra=None):
    """make_step(workload) builds the model and returns a function that runs
    one synchronized training step (it returns when the step has finished)."""
    extra = extra or {}
    emit(dict({"system": system, "ready": True}, **ready_info))
    runners = {}
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "quit":
            break
        try:
            if parts[0] != "run" or len(parts) != 4 or parts[1] not in WORKLOADS:
                raise ValueError("expected 'run <workload> <steps> <warmup>' or 'quit', got %r" % line.strip())
            emit(run(system, runners, make_step, parts[1], int(parts[2]), int(parts[3]), extra))
        except Exception as e:  # reported to the driver, which goes on with the others
            runners.pop(parts[1] if len(parts) > 1 else None, None)
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            emit({"system": system, "workload": parts[1] if len(parts) > 1 else "", "error": last[:2000]})
