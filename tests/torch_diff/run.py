#!/usr/bin/python3
"""run.py - the differential suite: every op of specs.py on every device
against torch. Prints a table per op (samples, checks passed, failed,
expected failures, worst relative error) and `N passed, M failed` last;
exits 1 when any check fails. Usage:
  run.py --lib build/liblazytensor.so [--header include/lazytensor.h]
         [--ops name,name] [--devices cpu,lazy/interp,lazy/cpu] [-v]"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import ltlib  # noqa: E402

# torch and the modules that import it are imported once the library is
# loaded (load()), so that a library that cannot be loaded is reported
# before torch's start-up time is spent.
engine = torch = None


def load(lib, header):
    """The library first, then torch."""
    global engine, torch
    L = ltlib.Lib(lib)
    L.bind_header(header)
    import engine as engine_module
    import torch as torch_module
    engine, torch = engine_module, torch_module
    return L


def run_units(L, units, dev, lazy):
    """Traces units (op, sample, want) on dev, runs the lazy step and reads
    every result. A failing step is split until its failing unit stands
    alone; that unit's results then are the step's error."""
    L.dll.lt_scope_begin()
    try:
        traced = [engine.lt_trace(L, op, s, dev, want) for op, s, want in units]
        if lazy and L.dll.lt_mark_step() != 0:
            msg = "lt: step failed: " + L.last_error()
            L.dll.lt_lazy_discard()
            L.dll.lt_clear_error()
            if len(units) == 1:
                return [{k: (msg if not isinstance(v, str) else v) for k, v in traced[0].items()}]
            L.dll.lt_scope_end()
            L.dll.lt_scope_begin()
            half = len(units) // 2
            return run_units(L, units[:half], dev, lazy) + run_units(L, units[half:], dev, lazy)
        return [engine.lt_read(L, g) for g in traced]
    finally:
        L.dll.lt_scope_end()
        L.dll.lt_clear_error()


# Ops that may sync and run their eager kernel on the lazy device (counted
# as "Fallback"): those whose result size depends on the data, and the
# LAPACK family (which has no lowering and reports singular inputs at the
# call, as torch does). Every other
# op must stay in the lazy graph (traced, lowered or called by the compiled
# program); a fallback there is a failure of the op.
LAPACK = "LAPACK routine run eagerly (no lowering)"
FALLBACK_OK = {
    "nonzero": "result size depends on the data",
    "masked_select": "result size depends on the data (through nonzero)",
    "where_indices": "result size depends on the data (through nonzero)",
    "unique": "result size depends on the data (through nonzero)",
    "unique_unsorted": "result size depends on the data (through nonzero)",
    "unique_dim": "result size depends on the data (through nonzero)",
    "unique_consecutive": "result size depends on the data (through nonzero)",
    "unique_consecutive_dim": "result size depends on the data (through nonzero)",
    "linalg_inv": LAPACK,
    "linalg_solve": LAPACK,
    "linalg_det": LAPACK,
    "linalg_slogdet": LAPACK,
    "linalg_slogdet_logabsdet": LAPACK,
    "linalg_cholesky": LAPACK,
    "linalg_qr": LAPACK,
    "linalg_eigh": LAPACK,
    "linalg_svd": LAPACK,
    "linalg_svdvals": LAPACK,
    "linalg_lstsq": LAPACK,
    "matrix_norm_singular": LAPACK + " (singular values through linalg_svdvals)",
}


class Tally:
    def __init__(self):
        self.samples = self.passed = self.failed = self.xfail = 0
        self.worst = 0.0
        self.notes = []


def check_op(L, op, devices, verbose):
    tally = Tally()
    refs = []
    for s in op.samples:
        refs.append(engine.torch_ref(op, s))
    tally.samples = len(op.samples)
    units = [(op, s, r) for s, r in zip(op.samples, refs)]
    for dev_name, kind, backend in devices:
        if backend:
            L.status(L.dll.lt_lazy_set_backend(backend), "lt_lazy_set_backend")
        L.cur_dev = ltlib.device(kind)
        lazy = kind == ltlib.DEVICE_LAZY
        if lazy:
            L.dll.lt_metrics_reset()
        got = run_units(L, units, L.cur_dev, lazy)
        if lazy and op.name not in FALLBACK_OK:
            fell = L.dll.lt_metrics_counter(b"Fallback")
            if fell:
                tally.failed += 1
                tally.notes.append(f"  FAIL {op.name} {dev_name}: {fell} eager fallback(s) on the lazy device "
                                   "(the op must stay in the graph; see FALLBACK_OK in run.py)")
        for s, ref, g in zip(op.samples, refs, got):
            reason = op.xfail(s)
            floats = [a.values.dtype for a in engine.flat_args(s)
                      if isinstance(a, engine.Arg) and a.values.dtype.kind == "f"]
            floor_dtype = min(floats, key=lambda d: d.itemsize) if floats else None
            for k in ref:
                ok, err, msg = engine.compare(op, k, ref[k], g.get(k, "lt: not run"), floor_dtype)
                if err != float("inf"):
                    tally.worst = max(tally.worst, err)
                if ok:
                    tally.passed += 1
                elif reason:
                    tally.xfail += 1
                    note = f"  expected-fail {op.name} {k} {dev_name} {s}: {reason}"
                    if verbose or note not in tally.notes:
                        tally.notes.append(note)
                else:
                    tally.failed += 1
                    tally.notes.append(f"  FAIL {op.name} {k} {dev_name} {s}: {msg}")
    return tally


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(HERE, "..", "..", "build", "liblazytensor.so"))
    ap.add_argument("--header", default=os.path.join(HERE, "..", "..", "include", "lazytensor.h"))
    ap.add_argument("--ops", default="")
    ap.add_argument("--devices", default="cpu,lazy/interp,lazy/cpu")
    ap.add_argument("-v", "--verbose", action="store_true")
    opt = ap.parse_args()
    L = load(opt.lib, opt.header)
    torch.set_num_threads(1)
    np.seterr(all="ignore")
    import specs
    wanted = set(filter(None, opt.ops.split(",")))
    ops = [o for o in specs.OPS if not wanted or o.name in wanted]
    devices = [d for d in engine.DEVICES if d[0] in opt.devices.split(",")]
    t0 = time.time()
    total = Tally()
    print(f"{'op':<22}{'samples':>8}{'passed':>8}{'failed':>8}{'xfail':>7}  max rel err")
    for op in ops:
        ta = check_op(L, op, devices, opt.verbose)
        print(f"{op.name:<22}{ta.samples:>8}{ta.passed:>8}{ta.failed:>8}{ta.xfail:>7}  {ta.worst:.2e}")
        limit = None if opt.verbose else 6
        for n in ta.notes[:limit]:
            print(n)
        if limit and len(ta.notes) > limit:
            print(f"  ... {len(ta.notes) - limit} more (run with -v --ops {op.name})")
        total.samples += ta.samples
        total.passed += ta.passed
        total.failed += ta.failed
        total.xfail += ta.xfail
        sys.stdout.flush()
    print(f"{len(ops)} ops, {total.samples} samples, checks on {len(devices)} devices "
          f"(forward, gradient, in place), {total.xfail} expected failures, {time.time() - t0:.0f} s")
    print(f"{total.passed} passed, {total.failed} failed")
    return 1 if total.failed else 0


if __name__ == "__main__":
    sys.exit(main())
