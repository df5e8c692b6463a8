#!/usr/bin/env python3
"""bench/peers driver: our lazy and eager devices against torch eager,
torch.compile, torch_xla and jax.jit on the same five training steps.

    python3 bench/peers/run.py [--quick] [--rounds N] [--steps N]
                               [--systems a,b] [--workloads a,b] ...

(`make bench-peers` builds build-bench/ and runs this.) It runs
bench/peers/setup.sh when a peer environment is missing, starts one process
per system (bench/peers_step for ours, torch_peer.py / jax_peer.py for the
peers), and interleaves: for each round, for each workload, each system runs
`warmup` steps and then `steps` timed steps and reports their median. The
system order rotates from round to round. Printed: the median of the round
medians (our lazy device in ms, every other system as peer / lazy: above 1
means the peer is slower), the cold first and second steps (first use of
each model in its process: tracing and compiling included, with empty
compile caches), and our devices without any OMP_* variable. With --busy,
each run is repeated at once with one process spinning on the last pinned
CPU, and both conditions are printed as ratios to torch eager. Every process
is pinned to the same CPUs and runs with the same thread count; the exact
environment of each is printed. Only the standard library is used.
"""
import argparse
import ctypes
import json
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = ("mlp_sgd", "mlp_adam", "transformer", "gpt", "mnist_cnn")
WORKLOAD_TITLES = {"mlp_sgd": "MLP, SGD", "mlp_adam": "MLP, Adam", "transformer": "transformer block",
                   "gpt": "GPT (2 layers)", "mnist_cnn": "MNIST CNN"}
# name: (column title, kind, environment 'pinned' (OMP_* set) or 'bare')
SYSTEMS = {
    "lazy": ("lazy", "ours", "pinned"),
    "eager": ("our eager", "ours", "pinned"),
    "torch": ("torch eager", "torch", "pinned"),
    "compile": ("torch.compile", "torch", "pinned"),
    "xla": ("torch_xla", "xla", "pinned"),
    "jax": ("jax.jit", "jax", "pinned"),
    "lazy-bare": ("lazy, no OMP_*", "ours", "bare"),
    "eager-bare": ("eager, no OMP_*", "ours", "bare"),
    "lazy-async": ("lazy, async", "ours", "pinned"),
}
MAIN_COLUMNS = ("lazy", "eager", "torch", "compile", "xla", "jax")
BARE_COLUMNS = ("lazy-bare", "eager-bare")
ASYNC_COLUMNS = ("lazy-async",)


def log(msg):
    print("[peers] " + msg, file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smoke test: 1 round, 3 steps, 1 warm-up step")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5)")
    ap.add_argument("--steps", type=int, default=None, help="timed steps per run (default 20)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed steps before each run (default 2)")
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma list of: " + ", ".join(SYSTEMS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list of: " + ", ".join(WORKLOADS))
    ap.add_argument("--threads", type=int, default=2, help="threads (and CPUs pinned) for every system")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"), help="build dir with bench/peers_step")
    ap.add_argument("--peers-dir", default=os.environ.get("LT_PEERS_DIR",
                                                          os.path.expanduser("~/.cache/lazytensor-peers")))
    ap.add_argument("--no-setup", action="store_true", help="do not run setup.sh for missing environments")
    ap.add_argument("--no-tracing", action="store_true", help="skip the tracing benchmark (bench/tracing)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds one run may take before its system "
                                                               "is dropped")
    ap.add_argument("--json", default=None, help="also write every result line to this file")
    ap.add_argument("--busy", action="store_true", help="also run every measurement with one busy process "
                                                        "(a spinning loop) on the last pinned CPU, right after "
                                                        "the idle one, and print both ratios to torch eager")
    a = ap.parse_args()
    a.rounds = a.rounds or (1 if a.quick else 5)
    a.steps = a.steps or (3 if a.quick else 20)
    a.warmup = a.warmup if a.warmup is not None else (1 if a.quick else 2)
    a.systems = [s for s in a.systems.split(",") if s]
    a.workloads = [w for w in a.workloads.split(",") if w]
    bad = [s for s in a.systems if s not in SYSTEMS] + [w for w in a.workloads if w not in WORKLOADS]
    if bad or a.rounds < 1 or a.steps < 1 or a.warmup < 0 or a.threads < 1:
        ap.error("unknown system/workload %s or a count below 1" % ", ".join(bad))
    return a


# ---- environments -------------------------------------------------------------


def venv_python(args, kind):
    return os.path.join(args.peers_dir, "xla" if kind == "xla" else "torch", "bin", "python")


def ensure_peers(args):
    kinds = {SYSTEMS[s][1] for s in args.systems} - {"ours"}
    missing = [k for k in kinds if not os.access(venv_python(args, k), os.X_OK)]
    if missing and not args.no_setup:
        log("peer environments missing (%s): running bench/peers/setup.sh" % ", ".join(sorted(missing)))
        env = dict(os.environ, LT_PEERS_DIR=args.peers_dir)
        subprocess.run(["bash", os.path.join(HERE, "setup.sh")], env=env, check=False)


def pinned_cpus(threads):
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:threads] if len(cpus) >= threads else cpus


def system_env(args, name, tmp):
    """(command, the variables this run sets, full environment)"""
    title, kind, mode = SYSTEMS[name]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "KMP_", "GOMP_"))}
    base["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the source tree
    for k in ("LT_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR", "XLA_FLAGS", "LT_BACKEND",
              "XLA_PERSISTENT_CACHE_PATH"):
        base.pop(k, None)
    extra = {}
    if mode == "pinned":
        extra.update(OMP_NUM_THREADS=str(args.threads), OMP_WAIT_POLICY="PASSIVE")
    if kind == "ours":
        extra["LT_CACHE_DIR"] = tempfile.mkdtemp(prefix=name + "-", dir=tmp)
        device = "lazy" if name.startswith("lazy") else "cpu"
        cmd = [os.path.join(args.build, "bench", "peers_step"), "--serve", "--device", device, "--name", name]
        if device == "lazy":  # timed steps run the native programs (cold steps may run on the interp tier)
            cmd.append("--wait-compiles")
        if name == "lazy-async":  # steps end with lt_step_end_async (lt_barrier(false))
            cmd.append("--async")
        if mode == "pinned":
            cmd += ["--threads", str(args.threads)]
    elif kind == "jax":
        extra["JAX_PLATFORMS"] = "cpu"
        cmd = [venv_python(args, kind), os.path.join(HERE, "jax_peer.py")]
    else:
        mode_arg = {"torch": "eager", "compile": "compile", "xla": "xla"}[name]
        cmd = [venv_python(args, kind), os.path.join(HERE, "torch_peer.py"), "--mode", mode_arg,
               "--threads", str(args.threads)]
        if name == "compile":
            extra["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor-", dir=tmp)
        if name == "xla":
            extra["PJRT_DEVICE"] = "CPU"
    return cmd, extra, dict(base, **extra)


# ---- system processes -----------------------------------------------------------


class System:
    def __init__(self, args, name, tmp):
        self.name, self.alive, self.info, self.error = name, False, {}, None
        cmd, self.extra, env = system_env(args, name, tmp)
        self.cpus = pinned_cpus(args.threads)
        self.log_path = os.path.join(tmp, name + ".stderr")
        if not os.access(cmd[0], os.X_OK):
            self.error = "not found: %s (%s)" % (cmd[0], "make bench-peers builds it" if SYSTEMS[name][1] ==
                                                  "ours" else "run bench/peers/setup.sh")
            return
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.log_path, "w"), env=env, text=True, bufsize=1,
                                     preexec_fn=lambda: os.sched_setaffinity(0, self.cpus))
        self.alive = True

    def read_line(self, timeout):
        """One JSON line, or None (timeout or exit: the system is dropped)."""
        deadline = time.monotonic() + timeout
        while self.alive:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                self.drop("no answer within %.0f s" % timeout)
                return None
            line = self.proc.stdout.readline()
            if not line:
                self.drop("exited with status %s" % self.proc.wait())
                return None
            line = line.strip()
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    pass
            # anything else a library printed on stdout is skipped
        return None

    def wait_ready(self, timeout):
        if not self.alive:
            return
        msg = self.read_line(timeout)
        if msg and msg.get("ready"):
            self.info = msg

    def run(self, workload, steps, warmup, timeout):
        if not self.alive:
            return None
        try:
            self.proc.stdin.write("run %s %d %d\n" % (workload, steps, warmup))
            self.proc.stdin.flush()
        except OSError as e:
            self.drop("stdin closed: %s" % e)
            return None
        return self.read_line(timeout)

    def drop(self, why):
        if self.alive:
            self.alive = False
            self.error = why + self.stderr_tail()
            self.proc.kill()
            self.proc.wait()

    def stderr_tail(self):
        try:
            with open(self.log_path) as f:
                lines = [ln.rstrip() for ln in f.readlines() if ln.strip()][-3:]
            return ("; stderr: " + " | ".join(lines)) if lines else ""
        except OSError:
            return ""

    def close(self):
        if self.alive:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
            self.alive = False


# ---- measuring ---------------------------------------------------------------


class BusyLoop:
    """One process spinning on one CPU: 'another process busy on the other
    core'. Started and stopped around each loaded measurement."""

    def __init__(self, cpu):
        self.cpu, self.proc = cpu, None

    def _child_setup(self):
        os.sched_setaffinity(0, [self.cpu])
        # killed with the driver, even when the driver itself is killed
        # (SIGTERM or SIGKILL skip __exit__): PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=self._child_setup)
        time.sleep(0.2)  # running before the measurement starts
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def measure_one(args, systems, results, raw, r, wl, name, busy):
    t0 = time.monotonic()
    if busy:
        with BusyLoop(pinned_cpus(args.threads)[-1]):
            msg = systems[name].run(wl, args.steps, args.warmup, args.timeout)
    else:
        msg = systems[name].run(wl, args.steps, args.warmup, args.timeout)
    key = name + ("@busy" if busy else "")
    if msg is not None:
        record(results, raw, r, wl, key, msg, time.monotonic() - t0)


def measure(args, systems, results, raw):
    for r in range(args.rounds):
        order = args.systems[r % len(args.systems):] + args.systems[:r % len(args.systems)]
        for wl in args.workloads:
            for name in order:
                measure_one(args, systems, results, raw, r, wl, name, False)
                if args.busy:
                    measure_one(args, systems, results, raw, r, wl, name, True)


def record(results, raw, r, wl, name, msg, seconds):
    """Files one answer of a system under `name` (with "@busy" when loaded)."""
    raw.append(dict(msg, round=r, busy=name.endswith("@busy")))
    cell = results.setdefault((name, wl), {"medians": [], "errors": []})
    if "error" in msg:
        cell["errors"].append(msg["error"])
        return
    cell["medians"].append(msg["median_ms"])
    if "cold_ms" in msg:
        cell["cold"] = (msg["cold_ms"], msg["second_ms"])
    for key in ("compiles_in_timed_steps", "interp_tier_runs_in_timed_steps", "threads", "backend"):
        if key in msg:
            cell[key] = msg[key]
    log("round %d  %-12s %-16s median %9.2f ms  (%.0f s)" % (r + 1, wl, name, msg["median_ms"], seconds))


def median_of(results, name, wl):
    cell = results.get((name, wl))
    return statistics.median(cell["medians"]) if cell and cell["medians"] else None


# ---- printing -----------------------------------------------------------------


def print_table(title, headers, rows):
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("\n" + title + "\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                                 enumerate(zip(r, widths))) + " |")


def cell_text(results, name, wl, ref):
    value = median_of(results, name, wl)
    cell = results.get((name, wl))
    if value is None:
        return "err" if cell and cell["errors"] else "n/a"
    if name == "lazy" or ref is None:
        return "%.2f ms" % value
    return "%.2fx" % (value / ref)


def print_results(args, systems, results):
    cols = [s for s in MAIN_COLUMNS if s in args.systems]
    if cols:
        rows = []
        for wl in args.workloads:
            ref = median_of(results, "lazy", wl)
            rows.append([WORKLOAD_TITLES[wl]] + [cell_text(results, s, wl, ref) for s in cols])
        print_table("Step time: median of %d round medians (%d steps each, %d warm-up); lazy in ms, others "
                    "as time / lazy time (above 1: slower than lazy)" % (args.rounds, args.steps, args.warmup),
                    ["workload"] + [SYSTEMS[s][0] for s in cols], rows)
    bare = [s for s in BARE_COLUMNS if s in args.systems]
    if bare:
        rows = []
        for wl in args.workloads:
            row = [WORKLOAD_TITLES[wl]]
            for s in bare:
                v, pinned = median_of(results, s, wl), median_of(results, s.replace("-bare", ""), wl)
                row.append("n/a" if v is None else "%.2f ms" % v +
                           (" (%.2fx)" % (v / pinned) if pinned else ""))
            rows.append(row)
        print_table("Our devices with no OMP_* variable set (library defaults), in ms and as time / the same "
                    "device with OMP_* set", ["workload"] + [SYSTEMS[s][0] for s in bare], rows)
    asynch = [s for s in ASYNC_COLUMNS if s in args.systems]
    if asynch:
        rows = []
        for wl in args.workloads:
            row = [WORKLOAD_TITLES[wl]]
            for s in asynch:
                v, sync = median_of(results, s, wl), median_of(results, "lazy", wl)
                row.append("n/a" if v is None else "%.2f ms" % v + (" (%.3fx)" % (v / sync) if sync else ""))
            rows.append(row)
        print_table("Our lazy device with the asynchronous step end (lt_step_end_async: the next step is traced "
                    "while this one runs), in ms and as time / the synchronous lazy step (below 1: faster)",
                    ["workload"] + [SYSTEMS[s][0] for s in asynch], rows)
    if args.busy:
        print_busy(args, results)
    all_cols = [s for s in SYSTEMS if s in args.systems]
    rows = []
    for wl in args.workloads:
        row = [WORKLOAD_TITLES[wl]]
        for s in all_cols:
            cold = results.get((s, wl), {}).get("cold")
            row.append("%.0f / %.0f" % cold if cold else "n/a")
        rows.append(row)
    print_table("Cold start: first / second step in ms (first use of the model in a fresh process: tracing "
                "and compiling included, empty compile caches)", ["workload"] + [SYSTEMS[s][0] for s in all_cols],
                rows)
    print_notes(args, systems, results)


def print_busy(args, results):
    """Each system idle and with a busy process on the last pinned CPU, and
    every system's ratio to torch eager in both cases."""
    cols = [s for s in args.systems if SYSTEMS[s][2] == "pinned"]
    rows = []
    for wl in args.workloads:
        row = [WORKLOAD_TITLES[wl]]
        torch_idle, torch_busy = median_of(results, "torch", wl), median_of(results, "torch@busy", wl)
        for s in cols:
            idle, busy = median_of(results, s, wl), median_of(results, s + "@busy", wl)
            if idle is None or busy is None:
                row.append("n/a")
                continue
            text = "%.2f / %.2f ms" % (idle, busy)
            if torch_idle and torch_busy and s != "torch":
                text += " (vs torch %.2fx / %.2fx)" % (idle / torch_idle, busy / torch_busy)
            row.append(text)
        rows.append(row)
    print_table("Idle / with one busy process on CPU %d: median step in ms, and time / torch eager's time in "
                "the same condition (below 1: faster than torch)" % pinned_cpus(args.threads)[-1],
                ["workload"] + [SYSTEMS[s][0] for s in cols], rows)


def print_notes(args, systems, results):
    print("\nNotes:")
    for wl in args.workloads:
        for s in ("lazy", "lazy-bare", "lazy-async"):
            n = results.get((s, wl), {}).get("compiles_in_timed_steps")
            if n:
                print("  - %s %s compiled %d program(s) during timed steps (expected 0)" % (s, wl, n))
            n = results.get((s, wl), {}).get("interp_tier_runs_in_timed_steps")
            if n:
                print("  - %s %s ran %d timed step program(s) on the interp tier (expected 0)" % (s, wl, n))
    for (s, wl), cell in sorted(results.items()):
        for e in sorted(set(cell["errors"])):
            print("  - %s %s failed: %s" % (s, wl, e))
    for s in args.systems:
        if systems[s].error:
            print("  - %s unavailable: %s" % (s, systems[s].error))


def print_header(args, systems):
    print("bench/peers: %d round(s) x %d steps (+%d warm-up), %d threads pinned to CPUs %s" %
          (args.rounds, args.steps, args.warmup, args.threads, pinned_cpus(args.threads)))
    print("Environment of each system (OMP_*, KMP_*, GOMP_* removed from the inherited environment first):")
    for s in args.systems:
        sysobj = systems[s]
        info = {k: v for k, v in sysobj.info.items() if k not in ("system", "ready")}
        shown = {k: ("<fresh temp dir>" if k.endswith("CACHE_DIR") else v) for k, v in sysobj.extra.items()}
        env = " ".join("%s=%s" % kv for kv in sorted(shown.items())) if sysobj.alive or sysobj.info else ""
        print("  %-11s %s%s" % (s, env or "-", ("  " + json.dumps(info)) if info else ""))
    sys.stdout.flush()


def run_tracing(args):
    exe = os.path.join(args.build, "bench", "tracing")
    if not os.access(exe, os.X_OK):
        print("\n(tracing benchmark not built: %s)" % exe)
        return
    print("\nTracing (bench/tracing%s):" % (" --quick" if args.quick else ""))
    sys.stdout.flush()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    env.update(OMP_NUM_THREADS=str(args.threads), OMP_WAIT_POLICY="PASSIVE")
    with tempfile.TemporaryDirectory(prefix="lt-tracing-") as cache:
        env["LT_CACHE_DIR"] = cache
        subprocess.run([exe] + (["--quick"] if args.quick else []), env=env, check=False,
                       preexec_fn=lambda: os.sched_setaffinity(0, pinned_cpus(args.threads)))


def main():
    args = parse_args()
    ensure_peers(args)
    tmp = tempfile.mkdtemp(prefix="lt-peers-")
    systems = {}
    try:
        for s in args.systems:
            systems[s] = System(args, s, tmp)
        for s in args.systems:
            systems[s].wait_ready(args.timeout)
        print_header(args, systems)
        results, raw = {}, []
        measure(args, systems, results, raw)
        print_results(args, systems, results)
        if args.json:
            with open(args.json, "w") as f:
                for line in raw:
                    f.write(json.dumps(line) + "\n")
    finally:
        for s in systems.values():
            s.close()
        shutil.rmtree(tmp, ignore_errors=True)
    if not args.no_tracing:
        run_tracing(args)


if __name__ == "__main__":
    main()
