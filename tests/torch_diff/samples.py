"""samples.py - deterministic sample inputs for the differential suite:
values by domain and dtype, edge values, and the standard sample sets of
unary, binary and reduction ops (broadcasting, non-contiguous views, size-0
and size-1 dims, every dtype, inf/nan/-0.0 and integer extremes)."""
import numpy as np

from engine import Arg, Sample

INF, NAN = float("inf"), float("nan")
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64, np.uint8]
ALL = FLOATS + INTS + [np.bool_]
FLOAT_EDGES = [INF, -INF, NAN, -0.0, 0.0, 1e-30, -1e-30, 1.0, -1.0, 0.5, -2.5, 3.5, 88.5, -100.0, 1e10, -1e10]

_counter = [0]


def rng():
    _counter[0] += 1
    return np.random.default_rng(_counter[0])


def values(shape, dtype, domain="normal"):
    """Random values of a domain: normal ([-2, 2] / small integers), pos
    ((0.1, 3]), unit ((-0.9, 0.9)), big1 (|x| > 1.1), nonzero, index:N
    ([0, N))."""
    r = rng()
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return r.random(shape) > 0.5
    if domain.startswith("index:"):
        return r.integers(0, int(domain[6:]), shape).astype(dtype)
    if dtype.kind in "iu":
        lo, hi = (0, 10) if dtype == np.uint8 else (-5, 6)
        if domain == "pos":
            lo = 1
        v = r.integers(lo, hi, shape)
        if domain == "nonzero":
            v = np.where(v == 0, 3, v)
        return v.astype(dtype)
    if domain == "pos":
        v = r.uniform(0.1, 3.0, shape)
    elif domain == "unit":
        v = r.uniform(-0.9, 0.9, shape)
    elif domain == "big1":
        v = r.uniform(1.1, 3.0, shape) * np.where(r.random(shape) > 0.5, 1, -1)
    else:
        v = r.uniform(-2.0, 2.0, shape)
        if domain == "nonzero":
            v = np.where(np.abs(v) < 0.1, 0.5, v)
    return v.astype(dtype)


def edges(dtype):
    """Edge values of a dtype, 1-D."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array(FLOAT_EDGES, dtype)
    if dtype == np.bool_:
        return np.array([True, False])
    info = np.iinfo(dtype)
    v = [info.min, info.max, 0, 1, info.max - 1, 2, 7]
    if dtype.kind == "i":
        v += [-1, info.min + 1, -7]
    return np.array(v, dtype)


def t(shape, dtype=np.float32, domain="normal", layout="c", grad=None):
    return Arg(values(shape, dtype, domain), layout, grad)


def unary_samples(dtypes=ALL, domain="normal", edge=True):
    out = []
    for dt in dtypes:
        out.append(Sample(t((3, 4), dt, domain)))
        if dt == np.float32:
            out += [Sample(t((3, 4), dt, domain, "t")), Sample(t((2, 3, 4), dt, domain, "s")),
                    Sample(t((), dt, domain)), Sample(t((0, 3), dt, domain)), Sample(t((1, 5), dt, domain))]
        if edge:
            out.append(Sample(Arg(edges(dt)), grad=False, note="edges"))
    return out


BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((0, 4), (4,)),
                 ((1,), (5,)), ((4, 1), ())]
MIXED = [(np.float32, np.int64), (np.int32, np.float64), (np.uint8, np.int32), (np.bool_, np.float32),
         (np.int64, np.bool_), (np.float32, np.float64)]


def binary_samples(dtypes=ALL, da="normal", db="normal", edge=True, mixed=True):
    out = []
    for dt in dtypes:
        out.append(Sample(t((3, 4), dt, da), t((3, 4), dt, db)))
        if edge:
            e = edges(dt)
            if db in ("nonzero", "pos") and np.dtype(dt).kind in "iub":
                eb = e[e > 0] if np.dtype(dt) != np.bool_ else e[e]
            else:
                eb = e
            out.append(Sample(Arg(e.reshape(-1, 1)), Arg(eb.reshape(1, -1)), grad=False, note="edges"))
    for sa, sb in BINARY_SHAPES:
        out.append(Sample(t(sa, np.float32, da), t(sb, np.float32, db)))
    out.append(Sample(t((3, 4), np.float32, da, "t"), t((3, 4), np.float32, db, "s")))
    out.append(Sample(t((2, 3, 4), np.float64, da, "s"), t((4, 3), np.float64, db, "t")))
    if mixed:
        for a, b in MIXED:
            if a in dtypes and b in dtypes:
                out.append(Sample(t((3, 4), a, da), t((4,), b, db)))
                out.append(Sample(t((3, 4), a, da), t((), b, db), note="0-d operand"))
    return out


REDUCE_DIMS = [(None, False), ([0], False), ([-1], True), ([0, 2], False), ([1], True)]


def reduce_samples(dtypes=ALL, domain="normal", dims_list=REDUCE_DIMS, empty=True):
    out = []
    for dt in dtypes:
        for dims, keep in dims_list:
            out.append(Sample(t((3, 4, 5), dt, domain), dims=dims, keepdim=keep))
    out.append(Sample(t((4, 3, 5), np.float32, domain, "t"), dims=[1], keepdim=False))
    out.append(Sample(t((2, 3, 6), np.float32, domain, "s"), dims=[-1], keepdim=True))
    out.append(Sample(t((), np.float32, domain), dims=None, keepdim=False))
    out.append(Sample(t((1, 4), np.float32, domain), dims=[0], keepdim=False))
    if empty:
        out.append(Sample(t((0, 4), np.float32, domain), dims=[0], keepdim=False, note="empty"))
        out.append(Sample(t((0, 4), np.float32, domain), dims=[1], keepdim=True, note="empty"))
    out.append(Sample(Arg(REDUCE_EDGES), dims=[1], keepdim=False, grad=False, note="edges"))
    return out


# edge rows whose results do not depend on the summation order
REDUCE_EDGES = np.array([[INF, 1, 2, 3], [-INF, NAN, 0, 1], [-0.0, -0.0, -0.0, -0.0], [1e30, 1e30, -1, 2],
                         [INF, -INF, 1, 1]], np.float32)
