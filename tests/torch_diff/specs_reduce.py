"""specs_reduce.py - the reductions PyTorch builds on the basic ones:
nansum, nanmean, count_nonzero, aminmax, the dtype= forms of sum, mean,
prod and cumsum, and the norms (vector_norm, norm, matrix_norm). Imported
at the end of specs.py, whose helpers it uses; its ops join specs.OPS."""
import numpy as np
import torch

from engine import Arg, Op, Sample
from samples import ALL, FLOATS, INF, INTS, NAN, REDUCE_DIMS, edges, reduce_samples, t
from specs import DT_LT, DT_TORCH, SUMS, TRANS, add, call, scan_samples

# NaNs among ordinary values, differentiated (torch gives NaN positions a 0
# gradient in nansum/nanmean)
NANS = np.array([[NAN, 1.5, -2.0, 0.25], [3.0, NAN, NAN, -1.0], [NAN, NAN, NAN, NAN]], np.float32)
NAN_SAMPLES = [Sample(Arg(NANS), dims=[1], keepdim=False, note="nan rows"),
               Sample(Arg(NANS.astype(np.float64)), dims=None, keepdim=False, note="nan"),
               Sample(Arg(NANS), dims=[0], keepdim=True, note="nan cols")]


def dims_ref(fn):
    """A torch reduction called with dims=None meaning every dim."""
    return lambda x, dims=None, keepdim=False: fn(x) if dims is None else fn(x, dims, keepdim)


def dims_lt(name):
    return lambda L, x, dims=None, keepdim=False: L.call(f"lt_{name}", x, dims or [], len(dims or []), keepdim)


add(Op("nansum", dims_lt("nansum"), dims_ref(torch.nansum), reduce_samples(ALL) + NAN_SAMPLES, rtol=SUMS))
XF_ALL_NAN = ("an all-NaN slice: torch's gradient is NaN at its elements (g / 0 * 0), here 0 (NaNs do not "
              "contribute)")
add(Op("nanmean", dims_lt("nanmean"), dims_ref(torch.nanmean),
       reduce_samples(FLOATS) + NAN_SAMPLES + [Sample(t((2, 3, 4), np.int64), dims=[1], keepdim=False)], rtol=SUMS,
       xfail=lambda s: XF_ALL_NAN if s.note == "nan rows" else None))

COUNT_DIMS = [None, [0], [-1], [0, 2], [1]]
COUNT_EDGES = np.array([[0.0, -0.0, NAN, INF], [1e-30, 0.0, -INF, 2.0]], np.float32)
add(Op("count_nonzero", lambda L, x, dims=None: L.call("lt_count_nonzero", x, dims or [], len(dims or [])),
       lambda x, dims=None: torch.count_nonzero(x) if dims is None else torch.count_nonzero(x, tuple(dims)),
       [Sample(t((3, 4, 5), dt, "index:2" if dt != np.bool_ else "normal"), dims=d)
        for dt in ALL for d in COUNT_DIMS] +
       [Sample(t((4, 3), np.float32, "index:2", "t"), dims=[0]), Sample(t((2, 6), np.int64, "index:2", "s"), dims=[1]),
        Sample(t((0, 4), np.float32), dims=[0]), Sample(t((), np.float32), dims=None),
        Sample(Arg(COUNT_EDGES), dims=[1], note="edges"), Sample(Arg(edges(np.int64)), dims=None, note="edges")],
       grad=False))


def aminmax_lt(L, x, dim=None, keepdim=False):
    d = [] if dim is None else [dim]
    return L.call("lt_aminmax", x, d, len(d), keepdim, "out")


def aminmax_ref(x, dim=None, keepdim=False):
    return torch.aminmax(x, keepdim=keepdim) if dim is None else torch.aminmax(x, dim=dim, keepdim=keepdim)


add(Op("aminmax", lambda L, *a, **k: tuple(aminmax_lt(L, *a, **k)[0:2]), aminmax_ref,
       [Sample(t((3, 4, 5), dt), dim=d, keepdim=k) for dt in ALL for d, k in ((None, False), (1, False), (-1, True))] +
       [Sample(t((4, 3), np.float32, layout="t"), dim=0), Sample(t((2, 6), np.float32, layout="s"), dim=-1),
        Sample(t((), np.float32), dim=0), Sample(t((), np.float32)), Sample(t((1, 5), np.float64), None, True),
        Sample(t((0, 3), np.float32), dim=1, note="empty output"), Sample(t((0, 3), np.float32), dim=0, note="empty"),
        Sample(t((0, 3), np.float32), note="empty"),
        Sample(Arg(edges(np.float32).reshape(4, 4)), dim=1, note="edges"),
        Sample(Arg(edges(np.int64)), note="edges"), Sample(Arg(edges(np.uint8)), dim=0, note="edges")],
       grad=False, note="torch 1.13 has no derivative for aminmax"))

# ---- dtype= forms ---------------------------------------------------------
TARGETS = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


def dtype_samples(sources, targets, dims_list=((None, False), ([1], True), ([0, 2], False))):
    out = [Sample(t((3, 4, 5), a), dims=d, keepdim=k, dtype=b) for a in sources for b in targets
           for d, k in dims_list]
    out += [Sample(t((4, 3), np.float32, layout="t"), dims=[0], keepdim=False, dtype=np.float64),
            Sample(t((0, 4), np.int32), dims=[0], keepdim=False, dtype=np.float32, note="empty"),
            Sample(t((), np.float64), dims=None, keepdim=False, dtype=np.float32),
            Sample(Arg(edges(np.int64)), dims=None, keepdim=False, dtype=np.int32, note="edges, wraps"),
            Sample(Arg(edges(np.float32)), dims=None, keepdim=False, dtype=np.float64, grad=False, note="edges")]
    return out


def dtype_reduce(name, ref, sources=ALL, targets=TARGETS, **kw):
    def lt(L, x, dims=None, keepdim=False, dtype=None):
        d = dims or []
        return L.call(f"lt_{name}_dtype", x, d, len(d), keepdim, DT_LT[dtype])

    def rf(x, dims=None, keepdim=False, dtype=None):
        return ref(x, dims, keepdim, DT_TORCH[dtype])

    # a f64 input reduced in f32 gets an f32-rounded gradient, computed in
    # another order than torch's
    return add(Op(f"{name}_dtype", lt, rf, dtype_samples(sources, targets), grad_rtol={"float64": 1e-6}, **kw))


def _prod_ref(x, dims, keep, dt):
    if dims is None:
        return torch.prod(x, dtype=dt)
    for d in sorted([d % max(x.dim(), 1) for d in dims], reverse=True):
        x = torch.prod(x, d, keep, dtype=dt)
    return x


dtype_reduce("sum", lambda x, d, k, dt: torch.sum(x, dtype=dt) if d is None else torch.sum(x, d, k, dtype=dt),
             rtol=SUMS)
dtype_reduce("mean", lambda x, d, k, dt: torch.mean(x, dtype=dt) if d is None else torch.mean(x, d, k, dtype=dt),
             rtol=SUMS)
dtype_reduce("prod", _prod_ref, sources=FLOATS + INTS, rtol=SUMS)
add(Op("cumsum_dtype", lambda L, x, d, dt: L.call("lt_cumsum_dtype", x, d, DT_LT[dt]),
       lambda x, d, dt: torch.cumsum(x, d, dtype=DT_TORCH[dt]),
       [Sample(s.args[0], s.args[1], dt, note=s.note, grad=s.grad) for s in scan_samples(ALL)[:6]
        for dt in TARGETS] +
       [Sample(s.args[0], s.args[1], np.float64, note=s.note, grad=s.grad) for s in scan_samples(ALL)[6:]] +
       [Sample(Arg(edges(np.int64)), 0, np.int32, note="edges, wraps")], rtol=SUMS))

# ---- norms ----------------------------------------------------------------
ORDS = [2, 1, INF, -INF, 0, 3, 0.5, -1, 1.5]
NORM_EDGES = np.array([[INF, 1, 2, 3], [-INF, NAN, 0, 1], [-0.0, -0.0, -0.0, -0.0], [1e30, 1e30, -1, 2],
                       [0.0, 0.0, 3.0, -4.0]], np.float32)


def norm_samples():
    out = []
    for o in ORDS:
        for dt in FLOATS:
            out += [Sample(t((3, 4, 5), dt), o, dims=d, keepdim=k) for d, k in REDUCE_DIMS]
        out += [Sample(t((4, 3, 5), np.float32, layout="t"), o, dims=[1]),
                Sample(t((2, 3, 6), np.float32, layout="s"), o, dims=[-1], keepdim=True),
                Sample(t((), np.float32), o), Sample(t((1, 4), np.float64), o, dims=[0]),
                Sample(t((0, 4), np.float32), o, dims=[0], note="empty"),
                Sample(t((0, 4), np.float32), o, dims=[1], keepdim=True, note="empty output"),
                Sample(Arg(NORM_EDGES), o, dims=[1], grad=False, note="edges"),
                Sample(Arg(np.zeros((2, 3), np.float64)), o, dims=[1], note="zero norm"),
                Sample(Arg(np.array([[0.0, 1.5, -2.0], [0.5, 0.0, 0.0]], np.float64)), o, dims=[1],
                       note="zero elements")]
    out += [Sample(t((3, 4), np.int64), 2.0, note="integer input"), Sample(t((3, 4), np.bool_), 1.0)]
    return out


def vnorm_lt(name):
    return lambda L, x, o, dims=None, keepdim=False: L.call(f"lt_{name}", x, float(o), dims or [], len(dims or []),
                                                            keepdim)


add(Op("vector_norm", vnorm_lt("vector_norm"),
       lambda x, o, dims=None, keepdim=False: torch.linalg.vector_norm(x, o, dims, keepdim), norm_samples(),
       rtol=TRANS, grad_rtol={"float32": 1e-4}))
add(Op("norm", vnorm_lt("norm"),
       lambda x, o, dims=None, keepdim=False: torch.norm(x, o, dims, keepdim), norm_samples(),
       rtol=TRANS, grad_rtol={"float32": 1e-4}))


def matrix_samples(o):
    out = [Sample(t((3, 4), dt), o) for dt in FLOATS]
    out += [Sample(t((2, 3, 4), np.float32), o, dims=[0, 2], keepdim=True),
            Sample(t((2, 3, 4), np.float64), o, dims=[-1, 0]), Sample(t((3, 5), np.float32, layout="t"), o),
            Sample(t((2, 3, 6), np.float32, layout="s"), o, keepdim=True), Sample(t((1, 1), np.float32), o),
            Sample(t((0, 3), np.float32), o, note="empty"), Sample(t((3, 0), np.float32), o, note="empty"),
            Sample(t((0, 2, 3), np.float32), o, note="empty batch"),
            Sample(Arg(NORM_EDGES), o, grad=False, note="edges"),
            Sample(t((4,), np.float32), o, note="1-d"), Sample(t((3, 4), np.int64), o, note="integer")]
    return out


def mnorm_lt(L, x, o, dims=None, keepdim=False):
    d = dims or []
    if o == "fro":
        return L.call("lt_matrix_norm_fro", x, d, len(d), keepdim)
    return L.call("lt_matrix_norm", x, float(o), d, len(d), keepdim)


def mnorm_ref(x, o, dims=None, keepdim=False):
    return torch.linalg.matrix_norm(x, o, dims if dims is not None else (-2, -1), keepdim)


add(Op("matrix_norm", mnorm_lt, mnorm_ref, [s for o in ("fro", 1, -1, INF, -INF) for s in matrix_samples(o)],
       rtol=TRANS, grad_rtol={"float32": 1e-4}))

# ---- scans ----------------------------------------------------------------
SCAN_EDGES = np.array([[NAN, 1, 2, NAN], [-INF, -INF, 1, INF], [INF, -INF, 3, 3], [-0.0, 0.0, -0.0, 0.0]], np.float32)
TIES = np.array([[1, 3, 3, 2, 3, 0], [5, 5, 5, 5, 5, 5], [2, 1, 1, 0, 0, 4]], np.float64)
ZEROS = np.array([[2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.0, 0.5, 3.0], [0.0, 2.0, 2.0, -1.0, 0.5]], np.float64)


def extra_scan_samples(dtypes, edges_grad=False):
    out = scan_samples(dtypes) + [Sample(Arg(SCAN_EDGES), 1, grad=edges_grad, note="edges"),
                                  Sample(Arg(SCAN_EDGES), 0, grad=edges_grad, note="edges"),
                                  Sample(t((), np.float32), 0), Sample(t((1, 4), np.float32), 0),
                                  Sample(t((3, 0), np.float32), 1)]
    return out


add(Op("cumprod", call("lt_cumprod"), torch.cumprod,
       extra_scan_samples(ALL) + [Sample(Arg(ZEROS), 1, note="zeros"), Sample(Arg(ZEROS.T.copy()), 0, note="zeros"),
                                  Sample(Arg(edges(np.int64)), 0, note="edges, wraps")], rtol=SUMS))
for _name in ("cummax", "cummin"):
    add(Op(_name, (lambda n: lambda L, x, d: tuple(L.call(f"lt_{n}", x, d, "out")))(_name),
           (lambda n: lambda x, d: tuple(getattr(torch, n)(x, d)))(_name),
           extra_scan_samples(ALL) + [Sample(Arg(TIES), 1, note="ties"), Sample(Arg(TIES.astype(np.int32)), 1),
                                      Sample(Arg(edges(np.uint8)), 0, note="edges"),
                                      Sample(Arg(np.array([True, False, True, False])), 0)]))
add(Op("logcumsumexp", call("lt_logcumsumexp"), torch.logcumsumexp,
       extra_scan_samples(FLOATS) + [Sample(t((3, 4), np.int64), 1, note="integer"),
                                     Sample(Arg(np.array([[-1e30, 5.0, -3.0], [700.0, 710.0, -710.0]])), 1)],
       rtol=TRANS, grad_rtol={"float32": 1e-4}))

# ---- selections -------------------------------------------------------------
SEL_EDGES = np.array([[NAN, 1, 2, NAN], [-INF, INF, 1, -0.0], [3, 3, 3, 1], [0.0, -0.0, 0.0, 5]], np.float32)


def select_samples(dtypes):
    out = []
    for dt in dtypes:
        out += [Sample(t((3, 4, 5), dt), 1, False), Sample(t((3, 4, 5), dt), -1, True)]
    out += [Sample(t((4, 3), np.float32, layout="t"), 0, False), Sample(t((2, 6), np.float64, layout="s"), 1, True),
            Sample(t((), np.float32), 0, False), Sample(t((1, 4), np.float32), 0, False),
            Sample(t((0, 3), np.float32), 1, False, note="empty output"),
            Sample(t((0, 3), np.float32), 0, False, note="empty"),
            Sample(Arg(SEL_EDGES), 1, False, grad=False, note="edges"),
            Sample(Arg(np.array([[2, 2, 2, 1, 1], [5, 1, 5, 1, 3]], np.int64)), 1, False, note="ties")]
    return out


def with_k(samples):
    out = []
    for s in samples:
        x = s.args[0].values
        n = 1 if x.ndim == 0 else x.shape[s.args[1]]
        for k in sorted({1, max(n, 1), (n + 1) // 2}):
            out.append(Sample(s.args[0], k, s.args[1], s.args[2], note=s.note, grad=s.grad))
    out.append(Sample(t((3, 4), np.float32), 5, 1, False, note="k out of range"))
    out.append(Sample(t((3, 4), np.float32), 0, 1, False, note="k out of range"))
    return out


add(Op("kthvalue", lambda L, x, k, d, kd: tuple(L.call("lt_kthvalue", x, k, d, kd, "out")),
       lambda x, k, d, kd: tuple(torch.kthvalue(x, k, d, kd)), with_k(select_samples(FLOATS + INTS + [np.bool_]))))
add(Op("median_dim", lambda L, x, d, kd: tuple(L.call("lt_median_dim", x, d, kd, "out")),
       lambda x, d, kd: tuple(torch.median(x, d, kd)), select_samples(FLOATS + INTS + [np.bool_])))
add(Op("median", call("lt_median"), torch.median,
       [Sample(t((3, 4, 5), dt)) for dt in FLOATS + INTS] +
       [Sample(t((4, 3), np.float32, layout="t")), Sample(t((), np.float64)), Sample(t((0, 3), np.float32)),
        Sample(Arg(SEL_EDGES), grad=False, note="edges"), Sample(Arg(SEL_EDGES[2:]), grad=False, note="edges")]))
XF_MODE_NAN = "mode with NaNs: torch's CPU mode compares NaNs unordered; here NaNs form one run, sorted last"
add(Op("mode", lambda L, x, d, kd: tuple(L.call("lt_mode", x, d, kd, "out")),
       lambda x, d, kd: tuple(torch.mode(x, d, kd)),
       select_samples(ALL) + [Sample(Arg(np.array([[1, 2, 2, 1, 3], [3, 2, 2, 3, 1]], np.float64)), 1, False),
                              Sample(t((4, 6), np.int32, "index:3"), 1, True, note="ties"),
                              Sample(Arg(np.array([True, False, True, False])), 0, False)],
       xfail=lambda s: XF_MODE_NAN if s.note == "edges" else None))

# ---- quantile ---------------------------------------------------------------
MODES = ["linear", "lower", "higher", "nearest", "midpoint"]
Q_EDGES = np.array([[NAN, 1, 2, 3, 4], [-INF, INF, 1, -0.0, 0.0], [3, 3, 3, 1, 1], [1, 2, 3, 4, 5]], np.float32)


def quantile_samples():
    out = []
    for mode in MODES:
        for q in (0.0, 0.375, 0.5, 1.0):
            out += [Sample(t((3, 4, 5), dt), q, 1, False, mode) for dt in FLOATS]
        out += [Sample(t((4, 3), np.float32, layout="t"), 0.3, 0, True, mode),
                Sample(t((2, 6), np.float64, layout="s"), 0.7, -1, False, mode),
                Sample(t((2, 3), np.float32), 0.25, None, False, mode), Sample(t((2, 3), np.float64), 0.6, None, True, mode),
                Sample(t((), np.float32), 0.5, 0, False, mode), Sample(t((1, 4), np.float32), 0.5, 0, False, mode),
                Sample(Arg(Q_EDGES), 0.5, 1, False, mode, grad=False, note="edges"),
                Sample(Arg(Q_EDGES), 0.4, 1, False, mode, note="nan, ties")]
    out += [Sample(t((0, 3), np.float32), 0.5, 1, False, "linear", note="empty"),
            Sample(t((3, 4), np.int64), 0.5, 1, False, "linear", note="integer"),
            Sample(t((3, 4), np.float32), 1.5, 1, False, "linear", note="q out of range"),
            Sample(t((3, 4), np.float32), -0.1, None, False, "linear", note="q out of range")]
    return out


def quantile_op(name, ref):
    def lt(L, x, q, dim, keep, mode):
        return L.call(f"lt_{name}", x, q, None if dim is None else [dim], keep, MODES.index(mode))

    def rf(x, q, dim, keep, mode):
        return ref(x, q, dim=dim, keepdim=keep, interpolation=mode)

    add(Op(name, lt, rf, quantile_samples(), rtol={"float32": 1e-6}, grad_rtol={"float32": 1e-4}))


quantile_op("quantile", torch.quantile)
quantile_op("nanquantile", torch.nanquantile)

# ---- dtype= of the norms and of cumprod -------------------------------------
NORM_DTYPES = [(np.float32, np.float64), (np.float64, np.float64), (np.float32, np.float32),
               (np.float64, np.float32), (np.int64, np.float64), (np.float32, np.int64)]


def norm_dtype_samples(ords, matrix=False):
    shape = (3, 4) if matrix else (3, 4, 5)
    out = [Sample(t(shape, a), o, dtype=b) for o in ords for a, b in NORM_DTYPES]
    out += [Sample(t((4, 3), np.float32, layout="t"), o, dims=[0, 1] if matrix else [1], keepdim=True,
                   dtype=np.float64) for o in ords]
    out.append(Sample(Arg(NORM_EDGES), ords[0], grad=False, dtype=np.float64, note="edges"))
    return out


def vnorm_dtype_lt(L, x, o, dims=None, keepdim=False, dtype=None):
    d = dims or []
    return L.call("lt_vector_norm_dtype", x, float(o), d, len(d), keepdim, DT_LT[dtype])


def mnorm_dtype_lt(L, x, o, dims=None, keepdim=False, dtype=None):
    d = dims or []
    if o == "fro":
        return L.call("lt_matrix_norm_fro_dtype", x, d, len(d), keepdim, DT_LT[dtype])
    return L.call("lt_matrix_norm_dtype", x, float(o), d, len(d), keepdim, DT_LT[dtype])


add(Op("vector_norm_dtype", vnorm_dtype_lt,
       lambda x, o, dims=None, keepdim=False, dtype=None: torch.linalg.vector_norm(x, o, dims, keepdim,
                                                                                   dtype=DT_TORCH[dtype]),
       norm_dtype_samples([2, 1, INF, 0, 0.5]), rtol=TRANS, grad_rtol={"float32": 1e-4, "float64": 1e-6}))
add(Op("matrix_norm_dtype", mnorm_dtype_lt,
       lambda x, o, dims=None, keepdim=False, dtype=None: torch.linalg.matrix_norm(
           x, o, dims if dims is not None else (-2, -1), keepdim, dtype=DT_TORCH[dtype]),
       norm_dtype_samples(["fro", 1, -INF], matrix=True), rtol=TRANS, grad_rtol={"float32": 1e-4, "float64": 1e-6}))
add(Op("cumprod_dtype", lambda L, x, d, dt: L.call("lt_cumprod_dtype", x, d, DT_LT[dt]),
       lambda x, d, dt: torch.cumprod(x, d, dtype=DT_TORCH[dt]),
       [Sample(s.args[0], s.args[1], dt, note=s.note, grad=s.grad) for s in scan_samples(ALL)[:6]
        for dt in TARGETS] +
       [Sample(s.args[0], s.args[1], np.float64, note=s.note, grad=s.grad) for s in scan_samples(ALL)[6:]] +
       [Sample(Arg(ZEROS), 1, np.float32, note="zeros"), Sample(Arg(edges(np.int64)), 0, np.int32, note="edges, wraps"),
        Sample(Arg(np.array([300, 300, 7], np.int32)), 0, np.uint8, note="wraps")], rtol=SUMS,
       grad_rtol={"float64": 1e-6}))
