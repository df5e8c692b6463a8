"""specs_shape.py - the shaping and indexing family: flip, roll, rot90,
repeat, tile, repeat_interleave, unbind, movedim, split by sizes, pad, take,
take_along_dim, index_add/copy/fill, index_put with accumulate,
masked_select/scatter, diag, diag_embed, trace, tril/triu_indices,
meshgrid, cartesian_prod, where with one argument, searchsorted, bucketize
and unique. Imported at the end of specs.py; its ops join specs.OPS."""
import ctypes

import numpy as np
import torch
import torch.nn.functional as F

from engine import Arg, Op, Sample
from ltlib import LtError
from samples import ALL, FLOATS, INF, INTS, NAN, edges, t, values
from specs import DT_LT, add, call

IDX = lambda shape, n, dt=np.int64: Arg(values(shape, dt, f"index:{n}"))  # noqa: E731
ARR = lambda *v, dt=np.int64: Arg(np.array(v, dt))  # noqa: E731
PAIR_DT = [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_]


def listed(L, name, *args, room=16):
    """Calls an lt function that writes up to `room` handles to an out array
    and returns their count (-1 on error)."""
    out = (ctypes.c_void_p * room)()
    n = L.call(name, *args, ctypes.cast(out, ctypes.c_void_p), room)
    if n < 0:
        raise LtError(f"{name}: {L.last_error()}")
    return tuple(out[k] for k in range(n))


def layouts(shape, dt=np.float32, domain="normal"):
    """A contiguous, a transposed and a strided input of one shape."""
    return [t(shape, dt, domain), t(shape, dt, domain, "t"), t(shape, dt, domain, "s")]


# ==== flip, roll, rot90 ======================================================
FLIP_DIMS = [[0], [-1], [0, 2], [], [2, 0, 1]]
add(Op("flip", lambda L, x, d: L.call("lt_flip", x, d, len(d)), torch.flip,
       [Sample(t((3, 4, 5), dt), d) for dt in PAIR_DT for d in FLIP_DIMS[:3]] +
       [Sample(x, d) for x in layouts((2, 3, 4)) for d in FLIP_DIMS] +
       [Sample(t(()), [0]), Sample(t((0, 3)), [0, 1]), Sample(t((1, 5), np.float64), [0, 1]),
        Sample(Arg(edges(np.float32)), [0], grad=False, note="edges"), Sample(Arg(edges(np.int64)), [-1], note="edges"),
        Sample(t((3, 4)), [0, -2], note="repeated dim"), Sample(t((3, 4)), [2], note="dim out of range")]))

ROLLS = [([1], [0]), ([2, -1], [0, 1]), ([5], []), ([-7], [1]), ([1, 1], [0, 0]), ([0], [1])]
add(Op("roll", lambda L, x, s, d: L.call("lt_roll", x, s, len(s), d, len(d)),
       lambda x, s, d: torch.roll(x, s, d) if d else torch.roll(x, s),
       [Sample(t((3, 4), dt), s, d) for dt in PAIR_DT for s, d in ROLLS[:3]] +
       [Sample(x, s, d) for x in layouts((3, 4)) for s, d in ROLLS] +
       [Sample(t(()), [1], []), Sample(t((0, 3)), [1], [0]), Sample(t((2, 0)), [3], []),
        Sample(t((1, 5), np.float64), [3], [-1]), Sample(Arg(edges(np.float32)), [4], [0], grad=False, note="edges"),
        Sample(t((3, 4)), [1, 2], [0], note="count mismatch"), Sample(t(()), [1], [0], note="0-d with a dim")]))

add(Op("rot90", call("lt_rot90"), lambda x, k, a, b: torch.rot90(x, k, [a, b]),
       [Sample(t((3, 4), dt), k, 0, 1) for dt in PAIR_DT for k in (1, 2, 3)] +
       [Sample(x, k, a, b) for x in layouts((3, 4)) for k, a, b in ((1, 0, 1), (-1, 0, 1), (5, 1, 0), (0, 0, 1),
                                                                   (2, -1, -2))] +
       [Sample(t((2, 3, 4)), 1, 0, 2), Sample(t((2, 3, 4), np.float64), 3, 2, 1), Sample(t((0, 3)), 1, 0, 1),
        Sample(t((1, 5)), 1, 0, 1), Sample(t((3,)), 1, 0, 0, note="1-d"), Sample(t((3, 4)), 1, 0, -2, note="same dims")]))

# ==== repeat, tile, repeat_interleave ===========================================
REPS = [[2, 1], [1, 2, 3], [0, 2], [2, 3]]
add(Op("repeat", lambda L, x, r: L.call("lt_repeat", x, r, len(r)), lambda x, r: x.repeat(*r) if r else x.repeat(()),
       [Sample(t((2, 3), dt), r) for dt in PAIR_DT for r in REPS[:2]] +
       [Sample(x, r) for x in layouts((2, 3)) for r in REPS] +
       [Sample(t(()), []), Sample(t(()), [3]), Sample(t((0, 2)), [2, 2]), Sample(t((1, 3), np.float64), [4, 1, 1]),
        Sample(t((2, 3)), [2], note="fewer counts"), Sample(t((2, 3)), [2, -1], note="negative")]))
add(Op("tile", lambda L, x, r: L.call("lt_tile", x, r, len(r)), torch.tile,
       [Sample(t((2, 3), dt), r) for dt in PAIR_DT for r in ([2], [2, 1, 2])] +
       [Sample(x, r) for x in layouts((2, 3)) for r in ([], [3], [0, 1], [2, 1, 1])] +
       [Sample(t(()), [2, 2]), Sample(t((0, 3)), [2]), Sample(t((2, 3)), [-1], note="negative")]))


def dim_arg(d):
    return None if d is None else [d]


RI = [(2, 0), (3, None), (0, 1), (1, -1), (2, 1)]
add(Op("repeat_interleave", lambda L, x, r, d: L.call("lt_repeat_interleave", x, r, dim_arg(d)),
       lambda x, r, d: torch.repeat_interleave(x, r, d),
       [Sample(t((3, 4), dt), r, d) for dt in PAIR_DT for r, d in RI[:3]] +
       [Sample(x, r, d) for x in layouts((3, 4)) for r, d in RI] +
       [Sample(t(()), 2, None), Sample(t(()), 2, 0, note="0-d with a dim"), Sample(t((0, 3)), 2, 0),
        Sample(t((3, 4)), -1, 0, note="negative")]))
add(Op("repeat_interleave_tensor", lambda L, x, r, d: L.call("lt_repeat_interleave_tensor", x, r, dim_arg(d)),
       lambda x, r, d: torch.repeat_interleave(x, r, d),
       [Sample(t((3, 4), dt), ARR(1, 0, 2), 0) for dt in PAIR_DT] +
       [Sample(x, ARR(2, 1, 0, 3), 1) for x in layouts((3, 4))] +
       [Sample(t((3, 4)), Arg(np.array(2)), 0), Sample(t((3, 4), np.float64), Arg(np.array(2)), None),
        Sample(t((3, 4)), ARR(1, 2, 0, 1, 1, 0, 2, 1, 1, 1, 0, 3), None), Sample(t((3, 4)), ARR(1, 0, 2, dt=np.int32), 0),
        Sample(t((0, 4)), ARR(dt=np.int64), 0), Sample(t((3, 4)), ARR(1, -1, 2), 0, note="negative"),
        Sample(t((3, 4)), ARR(1, 2), 0, note="wrong count")]))

# ==== unbind, movedim, split by sizes ===========================================
add(Op("unbind", lambda L, x, d: listed(L, "lt_unbind", x, d), torch.unbind,
       [Sample(t((3, 4), dt), 0) for dt in PAIR_DT] + [Sample(x, -1) for x in layouts((3, 4))] +
       [Sample(t((2, 3, 4)), 1), Sample(t((1, 5)), 0), Sample(t((0, 3)), 0, grad=False, note="no pieces"),
        Sample(t(()), 0, note="0-d")]))
MOVES = [([0], [2]), ([0, 1], [2, 0]), ([-1], [0]), ([2, 0, 1], [0, 1, 2]), ([], [])]
add(Op("movedim", lambda L, x, s, d: L.call("lt_movedim", x, s, d, len(s)), torch.movedim,
       [Sample(t((2, 3, 4), dt), [0], [2]) for dt in PAIR_DT] +
       [Sample(t((2, 3, 4), layout=lay), s, d) for lay in "cts" for s, d in MOVES] +
       [Sample(t(()), [0], [0]), Sample(t((2, 3, 4)), [0, 1], [1, 1], note="repeated dim"),
        Sample(t((2, 3, 4)), [3], [0], note="dim out of range")]))
add(Op("split_sizes", lambda L, x, s, d: listed(L, "lt_split_sizes", x, s, len(s), d), torch.split,
       [Sample(t((7, 3), dt), [2, 5], 0) for dt in PAIR_DT] +
       [Sample(x, s, d) for x in layouts((6, 4)) for s, d in (([3, 0, 3], 0), ([1, 3], 1), ([4], -1))] +
       [Sample(t((0, 3)), [0, 0], 0), Sample(t((7, 3)), [2, 4], 0, note="wrong sum"),
        Sample(t((7, 3)), [8, -1], 0, note="negative"), Sample(t(()), [1], 0, note="0-d")]))

# ==== pad ===================================================================
MODES = ["constant", "reflect", "replicate", "circular"]


def pad_lt(L, x, pad, mode, value=0.0):
    return L.call("lt_pad", x, pad, len(pad), MODES.index(mode), value)


def pad_ref(x, pad, mode, value=0.0):
    return F.pad(x, pad, mode, value) if mode == "constant" else F.pad(x, pad, mode)


def pad_samples():
    out = [Sample(t((3, 4), dt), [1, 2], "constant", 1.5) for dt in PAIR_DT]
    out += [Sample(x, p, "constant", v) for x in layouts((2, 3, 4)) for p, v in
            (([1, 1], 0.0), ([2, 0, 1, 3], -2.0), ([1, 1, 1, 1, 1, 1], 7.0), ([-1, 2], 0.5), ([0, 0, -1, -2], 0.0))]
    out += [Sample(t(()), [], "constant", 1.0), Sample(t((0, 3)), [1, 1, 2, 0], "constant", 3.0),
            Sample(Arg(edges(np.float32)), [2, 3], "constant", INF, grad=False, note="edges"),
            Sample(t((3, 4)), [1, 1], "constant", NAN), Sample(t((3, 4)), [-1, -3], "constant", 0.0),
            Sample(t((3, 4)), [-1, -4], "constant", 0.0, note="negative size"),
            Sample(t((3, 4)), [1], "constant", 0.0, note="odd count"),
            Sample(t((3, 4)), [1, 1, 1, 1, 1, 1], "constant", 0.0, note="too many")]
    for mode in MODES[1:]:
        out += [Sample(t((2, 3, 5), dt), [2, 1], mode) for dt in FLOATS]
        out += [Sample(x, p, mode) for x in layouts((2, 3, 5)) for p in ([1, 2], [0, 3], [-1, 2])]
        out += [Sample(t((1, 2, 4, 5)), [1, 2, 2, 1], mode), Sample(t((1, 2, 3, 4, 5)), [1, 1, 2, 0, 1, 2], mode),
                Sample(t((2, 4, 5), np.float64), [3, 1, 0, 2], mode), Sample(t((0, 3, 5)), [1, 1], mode),
                Sample(t((2, 3, 5)), [4, 5], mode, note="pad too large"),
                Sample(t((2, 3, 5), np.int64), [1, 1], mode, note="integer"),
                Sample(t((5,)), [1, 1], mode, note="1-d"), Sample(t((3, 5)), [1, 1], mode, note="no channel dim")]
    return out


add(Op("pad", pad_lt, pad_ref, pad_samples()))

# ==== take, take_along_dim ======================================================
add(Op("take", call("lt_take"), torch.take,
       [Sample(t((3, 4), dt), IDX((2, 3), 12)) for dt in PAIR_DT] +
       [Sample(x, IDX((5,), 12)) for x in layouts((3, 4))] +
       [Sample(t((3, 4)), ARR(-1, 0, -12, 5)), Sample(t(()), ARR(0, 0)), Sample(t((3, 4)), Arg(np.array(7))),
        Sample(t((3, 4)), ARR(dt=np.int64)), Sample(t((3, 4)), ARR(12), note="out of range"),
        Sample(t((3, 4)), ARR(0.5, dt=np.float32), grad=False, note="float index")]))
add(Op("take_along_dim", lambda L, x, i, d: L.call("lt_take_along_dim", x, i, dim_arg(d)),
       lambda x, i, d: torch.take_along_dim(x, i, d),
       [Sample(t((3, 4), dt), IDX((3, 2), 4), 1) for dt in PAIR_DT] +
       [Sample(x, i, d) for x in layouts((3, 4)) for i, d in
        ((IDX((3, 5), 4), 1), (IDX((2, 4), 3), 0), (IDX((1, 2), 4), -1), (IDX((2, 2), 12), None))] +
       [Sample(t((3, 1)), IDX((3, 5), 1), 1), Sample(t((3, 4)), IDX((1, 6), 3), 0), Sample(t(()), ARR(0), None),
        Sample(t((3, 4)), IDX((3,), 4), 1, note="rank mismatch"), Sample(t((3, 4)), IDX((2, 2), 4), 1, note="shape"),
        Sample(t((3, 4)), ARR([4]), 1, note="out of range")],
       xfail=lambda s: ("torch 1.13's take_along_dim without a dim views the input, which fails for a "
                        "non-contiguous one; lazytensor reshapes" if s.args[2] is None and s.args[0].layout != "c"
                        else None)))

# ==== index_add, index_copy, index_fill, index_put ================================
INDEX_SRC = [(0, IDX((4,), 5), (4, 3)), (1, ARR(2, 0, 2), (5, 3)), (-1, Arg(np.array(1)), (5, 1))]
add(Op("index_add", call("lt_index_add"), lambda x, d, i, s, a: torch.index_add(x, d, i, s, alpha=a),
       [Sample(t((5, 3), dt), 0, IDX((4,), 5), t((4, 3), dt), 1.0) for dt in PAIR_DT if dt != np.bool_] +
       [Sample(t((5, 3), layout=lay), d, i, t(s, layout=slay), a) for lay in "ct" for d, i, s in INDEX_SRC
        for slay, a in (("c", 1.0), ("t", -2.5))] +
       [Sample(t((5, 3), np.int64), 1, ARR(0, 2), t((5, 2), np.int64), 3.0),
        Sample(t(()), 0, ARR(0), t((1,)), 2.0), Sample(t((5, 3)), 0, ARR(dt=np.int64), t((0, 3)), 1.0),
        Sample(t((5, 3)), 0, ARR(-1, 0), t((2, 3)), 1.0, note="negative index"),
        Sample(t((5, 3)), 0, ARR(5), t((1, 3)), 1.0, note="out of range"),
        Sample(t((5, 3)), 0, ARR(1), t((1, 3), np.float64), 1.0, note="dtype mismatch"),
        Sample(t((5, 3)), 0, ARR(1), t((1, 2)), 1.0, note="shape mismatch")],
       inplace=call("lt_index_add_"), ref_inplace=lambda x, d, i, s, a: x.index_add_(d, i, s, alpha=a)))
UNIQUE_IDX = ARR(4, 0, 2)
add(Op("index_copy", call("lt_index_copy"), torch.index_copy,
       [Sample(t((5, 3), dt), 0, UNIQUE_IDX, t((3, 3), dt)) for dt in PAIR_DT] +
       [Sample(t((5, 3), layout=lay), 1, ARR(2, 0), t((5, 2), layout=slay)) for lay in "ct" for slay in "ct"] +
       [Sample(t((5, 3), np.float64), -2, UNIQUE_IDX, t((3, 3), np.float64)), Sample(t(()), 0, ARR(0), t((1,))),
        Sample(t((5, 3)), 0, ARR(dt=np.int64), t((0, 3))), Sample(t((5, 3)), 0, ARR(5), t((1, 3)), note="out of range"),
        Sample(t((5, 3)), 0, ARR(1), t((1, 3), np.int64), note="dtype mismatch")],
       inplace=call("lt_index_copy_"), ref_inplace=lambda x, d, i, s: x.index_copy_(d, i, s)))
add(Op("index_fill", call("lt_index_fill"), torch.index_fill,
       [Sample(t((3, 4), dt), 1, ARR(1, 3), 2.0) for dt in PAIR_DT] +
       [Sample(x, d, i, v) for x in layouts((3, 4)) for d, i, v in ((0, ARR(2, 0, 2), -1.5), (-1, ARR(-1), 7.0),
                                                                    (1, Arg(np.array(0)), NAN))] +
       [Sample(t((3, 4), np.int64), 1, ARR(1), 7.0), Sample(t(()), 0, ARR(0), 3.0), Sample(t((0, 4)), 1, ARR(2), 1.0),
        Sample(t((3, 4)), 1, ARR(4), 1.0, note="out of range"), Sample(t((3, 4)), 1, ARR([[1]]), 1.0, note="2-d index")],
       inplace=call("lt_index_fill_"), ref_inplace=lambda x, d, i, v: x.index_fill_(d, i, v)))


def iput_lt(L, x, idx, v, acc):
    return L.call("lt_index_put", x, idx, len(idx), v, acc)


def iput_ref(x, idx, v, acc):
    return torch.index_put(x, tuple(idx), v, accumulate=acc)


def iput_inplace(L, x, idx, v, acc):
    return L.call("lt_index_put_accumulate_" if acc else "lt_index_put_", x, idx, len(idx), v)


def iput_samples():
    out = []
    for acc in (True, False):
        rows = IDX((6,), 5) if acc else ARR(3, 0, 4)  # repeated indices only where they add up
        n = 6 if acc else 3
        out += [Sample(t((5, 3), dt), [rows], t((n, 3), dt), acc) for dt in PAIR_DT if dt != np.bool_]
        out += [Sample(t((5, 3), layout=lay), [rows], v, acc) for lay in "cts" for v in (t((n, 3)), t((3,)), t(()))]
        out += [Sample(t((5, 4)), [ARR(1, 4, 1) if acc else ARR(1, 4, 0), ARR(0, 3, 0) if acc else ARR(0, 3, 3)],
                       t((3,)), acc),
                Sample(t((2, 5, 4)), [ARR(1, 0), ARR(-1, 2)], t((2, 4), np.float64, grad=False), acc),
                Sample(t((5, 3)), [ARR(dt=np.int64)], t((0, 3)), acc),
                Sample(t((5, 3)), [ARR(5)], t((3,)), acc, note="out of range")]
    return out


add(Op("index_put", iput_lt, iput_ref, iput_samples(), inplace=iput_inplace,
       ref_inplace=lambda x, idx, v, acc: x.index_put_(tuple(idx), v, accumulate=acc),
       xfail=lambda s: ("values of another dtype are converted here; torch's index_put refuses them"
                        if s.args[2].values.dtype != s.args[0].values.dtype else None)))

# ==== masked_select, masked_scatter =============================================
add(Op("masked_select", call("lt_masked_select"), torch.masked_select,
       [Sample(t((3, 4), dt), t((3, 4), np.bool_)) for dt in PAIR_DT] +
       [Sample(x, m) for x in layouts((3, 4)) for m in (t((3, 4), np.bool_), t((4,), np.bool_))] +
       [Sample(t((1, 4)), t((3, 4), np.bool_)), Sample(t(()), Arg(np.array(True))),
        Sample(t((0, 4)), t((4,), np.bool_)), Sample(t((3, 4)), Arg(np.zeros((3, 4), np.bool_))),
        Sample(t((3, 4)), t((3, 4), np.uint8, "index:2")), Sample(t((3, 4)), t((3, 4)), note="float mask"),
        Sample(t((3, 4)), t((2, 4), np.bool_), note="shape")],
       xfail=lambda s: ("torch 1.13's masked_select gradient for a non-contiguous input follows its memory order "
                        "(it disagrees with x[mask]'s); lazytensor's follows the logical order"
                        if s.args[0].layout == "t" else None)))
add(Op("masked_scatter", call("lt_masked_scatter"), torch.masked_scatter,
       [Sample(t((3, 4), dt), t((3, 4), np.bool_), t((12,), dt)) for dt in PAIR_DT] +
       [Sample(x, m, t((4, 5))) for x in layouts((3, 4)) for m in (t((3, 4), np.bool_), t((4,), np.bool_))] +
       [Sample(t((1, 4)), t((3, 4), np.bool_), t((15,))), Sample(t((3, 4)), Arg(np.zeros((3, 4), np.bool_)), t((0,))),
        Sample(t((3, 4)), Arg(np.ones((3, 4), np.bool_)), t((2, 6), np.float32, layout="t")),
        Sample(t(()), Arg(np.array(True)), t((2,))),
        Sample(t((3, 4)), Arg(np.ones((3, 4), np.bool_)), t((5,)), note="short source"),
        Sample(t((3, 4)), t((3, 4), np.bool_), t((12,), np.float64), note="dtype mismatch")],
       inplace=call("lt_masked_scatter_"), ref_inplace=lambda x, m, s: x.masked_scatter_(m, s),
       xfail=lambda s: ("torch 1.13's masked_scatter_ into a non-contiguous tensor takes the source in the "
                        "destination's memory order (its out-of-place form, and lazytensor, in row-major order)"
                        if s.args[0].layout == "t" else None)))

# ==== diag, diag_embed, trace, tril/triu_indices ==================================
add(Op("diag", call("lt_diag"), torch.diag,
       [Sample(t((4,), dt), k) for dt in PAIR_DT for k in (0, 2, -1)] +
       [Sample(x, k) for x in layouts((3, 5)) for k in (0, 1, -2, 6)] +
       [Sample(t((0,)), 1), Sample(t((1,)), 0), Sample(t((4, 4), np.int64), -3),
        Sample(Arg(edges(np.float32)[:5]), 1, grad=False, note="edges"),
        Sample(t(()), 0, note="0-d"), Sample(t((2, 3, 4)), 0, note="3-d")],
       xfail=lambda s: ("torch 1.13 overflows computing the length of a diagonal outside the matrix; lazytensor "
                        "gives it empty, as torch.diagonal" if s.args[0].values.ndim == 2 and s.args[1] == 6
                        else None)))
add(Op("diag_embed", call("lt_diag_embed"), torch.diag_embed,
       [Sample(t((2, 3), dt), 0, -2, -1) for dt in PAIR_DT] +
       [Sample(x, k, a, b) for x in layouts((2, 3)) for k, a, b in ((1, 0, 2), (-1, 2, 0), (2, -1, 1), (0, 1, -1))] +
       [Sample(t((3,)), -2, 0, 1), Sample(t((2, 0)), 1, -2, -1), Sample(t((1,)), 0, 0, 1),
        Sample(t(()), 0, 0, 1, note="0-d"), Sample(t((2, 3)), 0, 1, 1, note="same dims")]))
add(Op("trace", call("lt_trace"), torch.trace,
       [Sample(t((3, 4), dt)) for dt in PAIR_DT] + [Sample(x) for x in layouts((4, 4))] +
       [Sample(t((0, 3))), Sample(t((1, 1), np.float64)), Sample(Arg(edges(np.float32).reshape(4, 4)), grad=False),
        Sample(t((2, 3, 4)), note="3-d")]))
for _name in ("tril_indices", "triu_indices"):
    add(Op(_name, (lambda n: lambda L, r, c, o: L.call(f"lt_{n}", r, c, o, L.cur_dev))(_name),
           getattr(torch, _name),
           [Sample(3, 2, 1), Sample(4, 4, 0), Sample(3, 5, -2), Sample(0, 2, -1), Sample(5, 3, 10), Sample(2, 6, -9),
            Sample(1, 1, 0), Sample(-1, 3, 0, note="negative row")], grad=False))

# ==== meshgrid, cartesian_prod, where(cond) =====================================
GRID_SETS = [[t((3,)), t((2,))], [t((3,), np.int64), t((4,), np.int64), t((2,), np.int64)],
             [t((4,), layout="s"), t(())], [t((0,)), t((3,))], [t((2,), np.float64)],
             [t((3,), np.bool_), t((2,), np.bool_)]]
for _xy in (False, True):
    add(Op("meshgrid_" + ("xy" if _xy else "ij"),
           (lambda xy: lambda L, ts: listed(L, "lt_meshgrid", ts, len(ts), xy))(_xy),
           (lambda xy: lambda ts: torch.meshgrid(*ts, indexing="xy" if xy else "ij"))(_xy),
           [Sample(s) for s in GRID_SETS] +
           [Sample([t((3,)), t((2,), np.float64)], note="dtype mismatch"), Sample([t((3, 2)), t((2,))], note="2-d")]))
add(Op("cartesian_prod", lambda L, ts: L.call("lt_cartesian_prod", ts, len(ts)), lambda ts: torch.cartesian_prod(*ts),
       [Sample(s) for s in GRID_SETS if all(a.values.ndim == 1 for a in s)] +
       [Sample([t((3,)), t(())], note="0-d"), Sample([t((3,)), t((2,), np.int64)], note="dtype mismatch")]))
add(Op("where_indices", lambda L, x: listed(L, "lt_where_indices", x), torch.where,
       [Sample(t((3, 4), dt, "index:2")) for dt in PAIR_DT] +
       [Sample(t((3, 4), np.float32, "index:2", lay)) for lay in "ts"] +
       [Sample(t((2, 3, 4), np.bool_)), Sample(Arg(np.array(3.0))), Sample(Arg(np.array(0))), Sample(t((0, 3))),
        Sample(Arg(edges(np.float32)), note="edges")], grad=False))

# ==== searchsorted, bucketize ====================================================
SEQ = Arg(np.array([-2.0, -0.5, -0.5, 0.0, 1.0, 1.0, 1.0, 3.5], np.float32))
VALS = Arg(np.array([[-3.0, -0.5, 0.0, 1.0], [0.5, 3.5, 9.0, NAN], [-INF, INF, -0.0, 1.0]], np.float32))


def search_samples():
    out = []
    for right in (False, True):
        out += [Sample(SEQ, VALS, False, right), Sample(SEQ, Arg(VALS.values.T.copy(), "t"), True, right),
                Sample(Arg(np.sort(values((2, 3, 6), np.float64), -1)), t((2, 3, 4), np.float64), False, right),
                Sample(Arg(np.array([1, 3, 3, 5, 9], np.int64)), Arg(np.array([0, 3, 4, 9, 10], np.int64)), False, right),
                Sample(Arg(np.array([1, 3, 3, 5, 9], np.int32)), t((3, 4), np.float32), True, right),
                Sample(Arg(np.array([0, 2, 4], np.uint8)), Arg(np.array([1, 2, 200], np.uint8)), False, right),
                Sample(SEQ, Arg(np.array(0.75, np.float32)), False, right), Sample(Arg(np.zeros(0, np.float32)),
                                                                               t((3,)), False, right),
                Sample(SEQ, t((0, 2)), False, right)]
    out += [Sample(Arg(np.sort(values((3, 6), np.float32), -1)), t((2, 4)), False, False, note="leading dims differ"),
            Sample(Arg(np.array([False, True])), Arg(np.array([True])), False, False, note="bool")]
    return out


add(Op("searchsorted", call("lt_searchsorted"), lambda s, v, i32, r: torch.searchsorted(s, v, out_int32=i32, right=r),
       search_samples(), grad=False))
add(Op("bucketize", call("lt_bucketize"), lambda x, b, i32, r: torch.bucketize(x, b, out_int32=i32, right=r),
       [Sample(s.args[1], s.args[0], s.args[2], s.args[3], note=s.note) for s in search_samples()
        if s.args[0].values.ndim == 1] + [Sample(t((3,)), Arg(np.sort(values((2, 3), np.float32), -1)), False, False, note="2-d")],
       grad=False))

# ==== unique ===================================================================
def unique_lt(L, x, inverse, counts):
    r = L.call("lt_unique", x, "out" if inverse else None, "out" if counts else None)
    return r if isinstance(r, tuple) else (r,)


def unique_ref(x, inverse, counts):
    r = torch.unique(x, sorted=True, return_inverse=inverse, return_counts=counts)
    return r if isinstance(r, tuple) else (r,)


UNIQUE_IN = [t((4, 5), np.int64, "index:4"), t((3, 4), np.float32, "index:3"), t((6,), np.bool_),
             t((3, 4), np.uint8, "index:5", "t"), t((2, 6), np.int32, "index:3", "s"), Arg(np.array(2.5)),
             t((0, 3)), Arg(np.array([0.0, -0.0, 1.0, INF, -INF, 1.0], np.float64)), Arg(edges(np.int64))]
add(Op("unique", unique_lt, unique_ref,
       [Sample(x, i, c) for x in UNIQUE_IN for i in (False, True) for c in (False, True)] +
       [Sample(Arg(np.array([NAN, 1.0, NAN], np.float32)), False, False, note="nan")], grad=False))

# ==== scatter_reduce ==============================================================
REDUCES = ["sum", "prod", "mean", "amax", "amin"]
SR_TIES = (Arg(np.array([[1.0, 2.0, 3.0, 0.0], [2.0, 2.0, -1.0, 5.0]])), Arg(np.array([[2, 0, 2, 2], [1, 1, 3, 1]])),
           Arg(np.array([[3.0, 1.0, 3.0, 0.0], [2.0, 2.0, 5.0, -1.0]])))


def sr_samples(reduce):
    out = []
    for inc in (True, False):
        out += [Sample(t((3, 5), dt, "pos"), 1, IDX((3, 4), 5), t((3, 4), dt, "pos"), reduce, inc)
                for dt in PAIR_DT if dt != np.bool_]
        out += [Sample(t((4, 3), layout=lay), 0, IDX((6, 3), 4), t((6, 3), layout=slay), reduce, inc)
                for lay in "ct" for slay in "cs"]
        # an index smaller than src: torch 1.13's backward fails on it, so forward only
        out += [Sample(t((4, 3)), 0, IDX((6, 2), 4), t((6, 3)), reduce, inc, grad=False, note="index < src"),
                Sample(t((2, 3, 4), np.float64), -1, IDX((2, 2, 3), 4), t((2, 3, 3), np.float64), reduce, inc,
                       grad=False, note="index < src"),
                Sample(t((3, 4)), 1, IDX((3, 0), 4), t((3, 2)), reduce, inc, grad=False, note="index < src"),
                Sample(t((3, 5), np.bool_), 1, IDX((3, 4), 5), t((3, 4), np.bool_), reduce, inc)]
        out += [Sample(SR_TIES[0], 1, SR_TIES[1], SR_TIES[2], reduce, inc, note="ties and zeros"),
                Sample(t((2, 3, 4), np.float64), -1, IDX((2, 3, 4), 4), t((2, 3, 4), np.float64), reduce, inc),
                Sample(t(()), 0, Arg(np.array(0)), t(()), reduce, inc),
                Sample(Arg(np.array([1.0, NAN, -INF, 2.0], np.float32)), 0, ARR(0, 1, 3, 3, 2),
                       Arg(np.array([NAN, 1.0, INF, -2.0, 0.0], np.float32)), reduce, inc, grad=False, note="edges")]
    out += [Sample(t((3, 5)), 1, ARR([[5]]), t((1, 1)), reduce, True, note="out of range"),
            Sample(t((3, 5)), 1, IDX((3, 2), 5), t((3, 2), np.float64), reduce, True, note="dtype mismatch")]
    return out


add(Op("scatter_reduce", lambda L, x, d, i, s, r, inc: L.call("lt_scatter_reduce", x, d, i, s, REDUCES.index(r), inc),
       lambda x, d, i, s, r, inc: torch.scatter_reduce(x, d, i, s, r, include_self=inc),
       [s for r in REDUCES for s in sr_samples(r)], rtol={"float32": 2e-6}, grad_rtol={"float32": 1e-4},
       xfail=lambda s: ("torch 1.13 counts the input among the ties of amax/amin even with include_self=False "
                        "(its gradients then add up to less than the output's); here only the sources share"
                        if s.note == "ties and zeros" and s.args[4] in ("amax", "amin") and not s.args[5] else None),
       inplace=lambda L, x, d, i, s, r, inc: L.call("lt_scatter_reduce_", x, d, i, s, REDUCES.index(r), inc),
       ref_inplace=lambda x, d, i, s, r, inc: x.scatter_reduce_(d, i, s, r, include_self=inc)))

# ==== unique along a dim, unique_consecutive, unsorted unique =================
def as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def unique_dim_lt(name):
    return lambda L, x, dim, i, c: as_tuple(L.call(name, x, dim, "out" if i else None, "out" if c else None))


def unique_dim_ref(fn):
    return lambda x, dim, i, c: as_tuple(fn(x, dim=dim, return_inverse=i, return_counts=c))


ROWS = Arg(np.array([[3, 1, 2], [0, 5, 5], [3, 1, 2], [0, 5, 4], [3, 0, 9]], np.int64))
NAN_ROWS = Arg(np.array([[1.0, NAN], [1.0, NAN], [-0.0, 0.0], [0.0, -0.0], [INF, 1.0]], np.float32))
RUNS = Arg(np.array([[1, 1, 2, 2, 2, 7], [1, 1, 2, 2, 3, 7]], np.int32))
UNIQUE_DIM_IN = [(ROWS, 0), (ROWS, 1), (ROWS, -1), (t((4, 3, 2), np.int64, "index:2"), 1),
                 (t((3, 4), np.float32, "index:2", "t"), 0), (t((6, 2), np.bool_), 0), (NAN_ROWS, 0),
                 (t((2, 6), np.uint8, "index:2", "s"), 1), (t((5,), np.int64, "index:3"), 0), (t((0, 3)), 0),
                 (t((3, 0)), 1), (RUNS, 1), (RUNS, 0)]
UNIQUE_DIM_BAD = [Sample(t((3, 0)), 0, False, False, note="another dim of size 0"),
                  Sample(Arg(np.array(2.0)), 0, False, False, note="0-d"), Sample(ROWS, 2, True, False)]
add(Op("unique_dim", unique_dim_lt("lt_unique_dim"), unique_dim_ref(torch.unique),
       [Sample(x, d, i, c) for x, d in UNIQUE_DIM_IN for i in (False, True) for c in (False, True)] + UNIQUE_DIM_BAD,
       grad=False))
add(Op("unique_consecutive",
       lambda L, x, i, c: as_tuple(L.call("lt_unique_consecutive", x, "out" if i else None, "out" if c else None)),
       lambda x, i, c: as_tuple(torch.unique_consecutive(x, return_inverse=i, return_counts=c)),
       [Sample(x, i, c) for x in UNIQUE_IN + [RUNS, NAN_ROWS] for i in (False, True) for c in (False, True)],
       grad=False))
add(Op("unique_consecutive_dim", unique_dim_lt("lt_unique_consecutive_dim"), unique_dim_ref(torch.unique_consecutive),
       [Sample(x, d, i, c) for x, d in UNIQUE_DIM_IN for i in (False, True) for c in (False, True)] + UNIQUE_DIM_BAD,
       grad=False))


def unsorted_order(s):
    return ("torch 1.13's CPU unique with sorted=False returns the iteration order of a std::unordered_set (its "
            "bucket layout); lazytensor sorts, as torch >= 2.1's CPU unique does for either value")


add(Op("unique_unsorted", unique_lt,
       lambda x, i, c: as_tuple(torch.unique(x, sorted=False, return_inverse=i, return_counts=c)),
       [Sample(x, i, c) for x in UNIQUE_IN[:3] for i in (False, True) for c in (False, True)], grad=False,
       xfail=unsorted_order))

# ==== searchsorted with sorter= and side= ======================================
UNSORTED = np.array([5.0, 1.0, 3.0, 3.0, -2.0, 9.0], np.float32)
UNSORTED_2D = values((3, 6), np.float64)


def sorter_of(a):
    return Arg(np.argsort(a, -1, kind="stable").astype(np.int64))


def sorter_samples():
    out = []
    for side in ("left", "right", None):
        out += [Sample(Arg(UNSORTED), t((3, 4)), sorter_of(UNSORTED), False, side),
                Sample(Arg(UNSORTED), Arg(np.array([3.0, -2.0, 9.0, 10.0, NAN], np.float32)), sorter_of(UNSORTED),
                       True, side),
                Sample(Arg(UNSORTED_2D), t((3, 2), np.float64), sorter_of(UNSORTED_2D), False, side),
                Sample(Arg(np.array([4, 0, 2], np.int64)), Arg(np.array([0, 2, 3, 4, 5], np.int64)),
                       sorter_of(np.array([4, 0, 2])), False, side),
                Sample(SEQ, VALS, None, False, side)]
    out += [Sample(Arg(UNSORTED), t((3,)), Arg(np.arange(6, dtype=np.int32)), False, "left", note="i32 sorter"),
            Sample(Arg(UNSORTED), t((3,)), Arg(np.arange(5)), False, "left", note="sorter shape"),
            Sample(Arg(UNSORTED), t((3,)), sorter_of(UNSORTED), False, "middle", note="bad side")]
    return out


add(Op("searchsorted_sorter", call("lt_searchsorted_sorter"),
       lambda s, v, so, i32, side: torch.searchsorted(s, v, out_int32=i32, side=side, sorter=so),
       sorter_samples(), grad=False))
