"""engine.py - runs op specs on every device and compares with torch.

An Op (specs.py) names the public function, its torch reference and a
sample generator. Each Sample holds the op's arguments: Arg values (a NumPy
array plus a layout: contiguous, transposed or strided, so that inputs reach
the op as non-contiguous views) and plain Python values. For every sample
and device the engine checks:
  fwd      the outputs (dtype, shape, values), or that both sides refuse;
  grad     the gradients of the floating inputs against torch.autograd,
           seeded with a fixed output gradient;
  inplace  the in-place form's destination after the call.
Devices: "cpu" (eager), "lazy/interp" and "lazy/cpu" (compiled, fused C).
On the lazy device every sample of a batch of ops is traced first and one
lt_mark_step runs them all; a failing step is split in halves until the
failing sample stands alone (its checks then need a refusal from torch).
"""
import math
import numpy as np
import torch

import ltlib
from ltlib import LtError

DEVICES = [("cpu", ltlib.DEVICE_CPU, None), ("lazy/interp", ltlib.DEVICE_LAZY, b"interp"),
           ("lazy/cpu", ltlib.DEVICE_LAZY, b"cpu")]

TORCH_OF_NP = {np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64,
               np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64,
               np.dtype(np.uint8): torch.uint8, np.dtype(np.bool_): torch.bool,
               np.dtype(np.float16): torch.float16}


class Arg:
    """A tensor argument: values plus the layout it reaches the op in.
    layout "c" contiguous, "t" a transposed view of the last two dims, "s" a
    view taking every other element of the last dim."""

    def __init__(self, values, layout="c", grad=None):
        self.values = np.asarray(values)
        self.layout = layout
        # grad None: differentiate when floating; False: never
        self.grad = grad

    def base(self):
        v = self.values
        if self.layout == "t":
            return np.ascontiguousarray(np.swapaxes(v, -1, -2))
        if self.layout == "s":
            b = np.zeros(v.shape[:-1] + (2 * v.shape[-1],), v.dtype)
            b[..., ::2] = v
            return b
        return v

    def wants_grad(self):
        return self.grad is not False and self.values.dtype in (np.float32, np.float64)

    def __repr__(self):
        return f"{self.values.dtype}{list(self.values.shape)}{'' if self.layout == 'c' else self.layout}"


class Sample:
    def __init__(self, *args, **kw):
        self.args = list(args)
        self.note = kw.pop("note", "")
        self.grad = kw.pop("grad", True)
        self.kw = kw

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v}" for k, v in self.kw.items()]
        return "(" + ", ".join(parts) + (f"; {self.note}" if self.note else "") + ")"


class Op:
    """lt(L, *args, **kw) calls lazytensor (tensor args are handles), ref(*args,
    **kw) calls torch; both return a tensor or a tuple of them. inplace /
    ref_inplace are the in-place forms (the first argument is the
    destination). xfail(sample) returns a reason when a known difference is
    expected for that sample, else None."""

    def __init__(self, name, lt, ref, samples, grad=True, inplace=None, ref_inplace=None, rtol=None,
                 atol=None, grad_rtol=None, xfail=None, note=""):
        self.name, self.lt, self.ref, self.samples = name, lt, ref, samples
        self.grad, self.inplace, self.ref_inplace = grad, inplace, ref_inplace
        self.rtol, self.atol, self.grad_rtol = rtol, atol, grad_rtol
        self.xfail = xfail or (lambda s: None)
        self.note = note


# ---- materializing arguments -----------------------------------------------

def lt_view_of(L, h, arg):
    if arg.layout == "t":
        return L.call("lt_transpose", h, -1, -2)
    if arg.layout == "s":
        return L.call("lt_slice", h, -1, 0, 2 * arg.values.shape[-1], 2)
    return h


def torch_view_of(t, arg):
    if arg.layout == "t":
        return t.transpose(-1, -2)
    if arg.layout == "s":
        return t[..., ::2]
    return t


def torch_args(sample, need_grad):
    leaves, args = [], []
    for a in sample.args:
        if isinstance(a, Arg):
            base = torch.from_numpy(a.base().copy())
            if need_grad and a.wants_grad():
                base.requires_grad_(True)
                leaves.append(base)
            args.append(torch_view_of(base, a))
        elif isinstance(a, list) and a and isinstance(a[0], Arg):
            ts = []
            for x in a:
                base = torch.from_numpy(x.base().copy())
                if need_grad and x.wants_grad():
                    base.requires_grad_(True)
                    leaves.append(base)
                ts.append(torch_view_of(base, x))
            args.append(ts)
        else:
            args.append(a)
    return args, leaves


def lt_args(L, sample, dev, need_grad):
    leaves, args = [], []

    def one(x):
        base = L.tensor(x.base(), dev)
        if need_grad and x.wants_grad():
            L.status(L.dll.lt_set_requires_grad(base, True), "lt_set_requires_grad")
            leaves.append(base)
        return lt_view_of(L, base, x)

    for a in sample.args:
        if isinstance(a, Arg):
            args.append(one(a))
        elif isinstance(a, list) and a and isinstance(a[0], Arg):
            args.append([one(x) for x in a])
        else:
            args.append(a)
    return args, leaves


def as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def seed_grad(shape, dtype, k):
    """A fixed output gradient: distinct, exactly representable values."""
    n = int(np.prod(shape)) if shape else 1
    v = ((np.arange(n) * 7 + 3 * k) % 11 - 5) / 4.0
    return v.reshape(shape).astype(dtype)


# ---- the reference side ----------------------------------------------------

def torch_ref(op, sample):
    """{'fwd': arrays or exception text, 'grad': ..., 'inplace': ...}"""
    out = {}
    try:
        args, _ = torch_args(sample, False)
        with torch.no_grad():
            r = as_tuple(op.ref(*args, **sample.kw))
        out["fwd"] = [x.detach().numpy().copy() if isinstance(x, torch.Tensor) else np.asarray(x) for x in r]
    except Exception as e:  # torch refuses the call
        out["fwd"] = "torch: " + str(e).split("\n")[0]
        return out
    if op.grad and sample.grad and any(isinstance(a, Arg) and a.wants_grad() for a in flat_args(sample)):
        try:
            args, leaves = torch_args(sample, True)
            r = as_tuple(op.ref(*args, **sample.kw))[0]
            if r.requires_grad:
                g = torch.from_numpy(seed_grad(tuple(r.shape), out["fwd"][0].dtype, 1))
                r.backward(g)
                out["grad"] = [l.grad.numpy().copy() if l.grad is not None else np.zeros(l.shape, l.dtype.__repr__() and l.detach().numpy().dtype) for l in leaves]
        except Exception as e:
            out["grad"] = "torch: " + str(e).split("\n")[0]
    if op.inplace:
        try:
            args, _ = torch_args(sample, False)
            with torch.no_grad():
                op.ref_inplace(*args, **sample.kw)
            out["inplace"] = [args[0].numpy().copy()]
        except Exception as e:
            out["inplace"] = "torch: " + str(e).split("\n")[0]
    return out


def flat_args(sample):
    for a in sample.args:
        if isinstance(a, list) and a and isinstance(a[0], Arg):
            yield from a
        else:
            yield a


# ---- the lazytensor side ---------------------------------------------------

def lt_trace(L, op, sample, dev, want):
    """Calls the op on dev; returns {kind: handles or error text}. On the lazy
    device the handles are pending until the next step."""
    got = {}
    try:
        args, _ = lt_args(L, sample, dev, False)
        got["fwd"] = list(as_tuple(op.lt(L, *args, **sample.kw)))
    except LtError as e:
        got["fwd"] = "lt: " + str(e)
        L.dll.lt_clear_error()
    if "grad" in want:
        try:
            args, leaves = lt_args(L, sample, dev, True)
            r = as_tuple(op.lt(L, *args, **sample.kw))[0]
            ref_dtype = want["fwd"][0].dtype
            g = L.tensor(seed_grad(L.shape(r), ref_dtype, 1), dev)
            L.status(L.dll.lt_backward(r, g), "lt_backward")
            grads = []
            for leaf in leaves:
                h = L.dll.lt_grad(leaf)
                if not h:
                    h = L.call("lt_zeros_like", leaf)
                grads.append(h)
            got["grad"] = grads
        except LtError as e:
            got["grad"] = "lt: " + str(e)
            L.dll.lt_clear_error()
    if "inplace" in want:
        try:
            args, _ = lt_args(L, sample, dev, False)
            op.inplace(L, *args, **sample.kw)
            got["inplace"] = [args[0]]
        except LtError as e:
            got["inplace"] = "lt: " + str(e)
            L.dll.lt_clear_error()
    return got


def lt_read(L, got):
    out = {}
    for kind, v in got.items():
        if isinstance(v, str):
            out[kind] = v
            continue
        try:
            out[kind] = [L.numpy(h) for h in v]
        except LtError as e:
            out[kind] = "lt: " + str(e)
            L.dll.lt_clear_error()
    return out


# ---- comparing -------------------------------------------------------------

def tolerances(op, dtype, kind):
    if dtype == np.float64:
        rtol, atol = 1e-10, 1e-12
    elif dtype == np.float16:
        rtol, atol = 1e-3, 1e-3
    else:
        rtol, atol = 1e-5, 1e-6
    if kind == "grad":
        rtol, atol = rtol * 10, atol * 10
        if op.grad_rtol:
            rtol = max(rtol, op.grad_rtol.get(np.dtype(dtype).name, 0))
    if op.rtol and np.dtype(dtype).name in op.rtol:
        rtol = max(rtol, op.rtol[np.dtype(dtype).name])
    if op.atol and np.dtype(dtype).name in op.atol:
        atol = max(atol, op.atol[np.dtype(dtype).name])
    return rtol, atol


def compare(op, kind, ref, got, floor_dtype=None):
    """(ok, max relative error, message). floor_dtype: the least precise
    floating input (gradients of a wider input keep its rounding)."""
    if isinstance(ref, str) or isinstance(got, str):
        if isinstance(ref, str) and isinstance(got, str):
            return True, 0.0, ""
        return False, math.inf, (ref if isinstance(ref, str) else "torch accepts") + " | " + (
            got if isinstance(got, str) else "lt accepts")
    if len(ref) != len(got):
        return False, math.inf, f"{len(got)} outputs, torch has {len(ref)}"
    worst = 0.0
    for r, g in zip(ref, got):
        if r.dtype != g.dtype:
            return False, math.inf, f"dtype {g.dtype}, torch {r.dtype}"
        if r.shape != g.shape:
            return False, math.inf, f"shape {g.shape}, torch {r.shape}"
        if r.size == 0:
            continue
        if r.dtype.kind in "biu":
            bad = r != g
            if bad.any():
                i = np.argwhere(bad)[0]
                return False, math.inf, f"at {tuple(i)}: {g[tuple(i)]}, torch {r[tuple(i)]}"
            continue
        rtol, atol = tolerances(op, r.dtype, kind)
        if kind == "grad" and floor_dtype is not None:
            rtol, atol = map(max, zip((rtol, atol), tolerances(op, floor_dtype, kind)))
        r64, g64 = r.astype(np.float64), g.astype(np.float64)
        same_special = (np.isnan(r64) & np.isnan(g64)) | ((r64 == g64) & ~np.isnan(r64))
        diff = np.abs(r64 - g64)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(same_special, 0.0, diff / np.maximum(np.abs(r64), atol / rtol))
        rel = np.nan_to_num(rel, nan=math.inf)
        worst = max(worst, float(rel.max()))
        bad = ~same_special & ~(diff <= atol + rtol * np.abs(r64))
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            return False, worst, f"at {i}: {g[i]!r}, torch {r[i]!r}"
    return True, worst, ""
