"""specs_conv.py - the convolution, pooling and resampling family beyond
conv2d: conv1d, conv3d, conv_transpose1d/2d, unfold, fold, pixel_shuffle,
pixel_unshuffle, max/avg pooling in 1-D and in 2-D with ceil_mode,
dilation and divisor_override, adaptive pooling and interpolate. Samples
cover batched and unbatched inputs, stride / padding / dilation / groups,
non-contiguous views, size-1 dims and f32 / f64. Imported at the end of
specs.py, whose helpers it uses; its ops join specs.OPS."""
import numpy as np
import torch.nn.functional as F

from engine import Arg, Op, Sample
from samples import t
from specs import BLAS, SUMS, add

F64 = np.float64
INF = float("inf")


def two(v):
    """An int as a pair, a tuple / list as a list, None as None."""
    if v is None:
        return None
    return list(v) if isinstance(v, (list, tuple)) else [v, v]


def three(v):
    return None if v is None else (list(v) if isinstance(v, (list, tuple)) else [v, v, v])


# atol: a sum of K products of values near 1 that cancels to near 0 is off
# by about K * eps in f32 whatever the order of the sum, and BLAS libraries
# order it differently (conv3d's 24-term windows: 1.3e-6 between oneDNN's
# sgemm and torch's)
CONV_TOL = dict(rtol=BLAS, atol={"float32": 5e-6}, grad_rtol={"float32": 1e-4})

# ---- convolutions -------------------------------------------------------------

add(Op("conv1d", lambda L, x, w, b, s, p, d, g: L.call("lt_conv1d", x, w, b, s, p, d, g),
       lambda x, w, b, s, p, d, g: F.conv1d(x, w, b, s, p, d, g),
       [Sample(t((2, 3, 10)), t((4, 3, 3)), t((4,)), 1, 0, 1, 1),
        Sample(t((1, 4, 9)), t((6, 2, 2)), None, 2, 1, 1, 2, note="groups"),
        Sample(t((2, 2, 12), F64), t((2, 2, 3), F64), t((2,), F64), 1, 2, 2, 1, note="dilation"),
        Sample(t((3, 8)), t((4, 3, 3)), t((4,)), 1, 1, 1, 1, note="no batch dim"),
        Sample(t((2, 7, 3), layout="t"), t((5, 3, 2), layout="s"), None, 3, 1, 1, 1, note="views"),
        Sample(t((1, 1, 1)), t((1, 1, 1)), t((1,)), 1, 0, 1, 1, note="size 1"),
        Sample(t((2, 6, 5)), t((6, 1, 3)), t((6,)), 1, 1, 1, 6, note="depthwise"),
        Sample(t((2, 3, 5), np.int64), t((2, 3, 3), np.int64), None, 1, 0, 1, 1, note="i64"),
        Sample(t((2, 3, 2)), t((2, 3, 3)), None, 1, 0, 1, 1, note="too short")],
       **CONV_TOL))

add(Op("conv3d", lambda L, x, w, b, s, p, d, g: L.call("lt_conv3d", x, w, b, three(s), three(p), three(d), g),
       lambda x, w, b, s, p, d, g: F.conv3d(x, w, b, s, p, d, g),
       [Sample(t((2, 2, 5, 6, 5)), t((3, 2, 2, 3, 2)), t((3,)), 1, 0, 1, 1),
        Sample(t((1, 4, 6, 5, 7)), t((4, 2, 3, 2, 3)), None, (2, 1, 2), (1, 0, 1), (1, 2, 1), 2, note="groups"),
        Sample(t((1, 2, 4, 4, 4), F64), t((2, 2, 3, 3, 3), F64), t((2,), F64), 1, 1, 1, 1),
        Sample(t((2, 4, 5, 3)), t((3, 2, 2, 2, 2)), None, 1, 0, (2, 1, 1), 1, note="no batch dim"),
        Sample(t((1, 3, 4, 5, 6), layout="t"), t((2, 3, 1, 3, 3)), t((2,)), (1, 2, 1), 1, 1, 1, note="views"),
        Sample(t((1, 1, 1, 1, 1)), t((2, 1, 1, 1, 1)), None, 1, 0, 1, 1, note="size 1"),
        Sample(t((1, 2, 5, 4, 4)), t((2, 2, 3, 2, 2)), None, (3, 1, 1), (2, 0, 0), 1, 1, note="depth stride"),
        Sample(t((1, 2, 3, 4, 4), np.int64), t((2, 2, 2, 2, 2), np.int64), t((2,), np.int64), 1, 1, 1, 1, note="i64")],
       **CONV_TOL))

add(Op("conv_transpose2d",
       lambda L, x, w, b, s, p, op, g, d: L.call("lt_conv_transpose2d", x, w, b, two(s), two(p), two(op), g, two(d)),
       lambda x, w, b, s, p, op, g, d: F.conv_transpose2d(x, w, b, s, p, op, g, d),
       [Sample(t((2, 3, 5, 5)), t((3, 4, 3, 3)), t((4,)), 1, 0, 0, 1, 1),
        Sample(t((1, 4, 4, 5)), t((4, 3, 3, 3)), t((6,)), 2, 1, 1, 2, 1, note="groups, output_padding"),
        Sample(t((1, 2, 4, 4)), t((2, 3, 3, 2)), None, 1, 1, 1, 1, 2, note="output_padding >= stride"),
        Sample(t((2, 2, 3, 4), F64), t((2, 2, 2, 3), F64), t((2,), F64), (2, 3), (1, 0), (1, 2), 1, (1, 2)),
        Sample(t((3, 4, 4)), t((3, 2, 3, 3)), t((2,)), 2, 1, 0, 1, 1, note="no batch dim"),
        Sample(t((2, 3, 4, 5), layout="t"), t((3, 2, 2, 2), layout="s"), None, 1, 0, 0, 1, 1, note="views"),
        Sample(t((1, 1, 1, 1)), t((1, 1, 1, 1)), t((1,)), 1, 0, 0, 1, 1, note="size 1"),
        Sample(t((1, 2, 3, 3)), t((2, 1, 3, 3)), None, 2, 2, 1, 1, 1, note="crop"),
        Sample(t((1, 2, 3, 3)), t((2, 1, 3, 3)), None, 1, 0, 1, 1, 1, note="output_padding too big"),
        Sample(t((1, 2, 3, 3), np.int32), t((2, 3, 2, 2), np.int32), t((3,), np.int32), 2, 1, 1, 1, 1, note="i32: refused by both"),
        Sample(t((1, 2, 3, 3), np.uint8), t((2, 1, 2, 2), np.uint8), None, 2, 0, 0, 1, 1, note="u8: refused by both"),
        Sample(t((1, 2, 3, 3), np.int64), t((2, 3, 2, 2), np.int64), t((3,), np.int64), 2, 1, 1, 1, 1, note="i64")],
       **CONV_TOL))

add(Op("conv_transpose1d",
       lambda L, x, w, b, s, p, op, g, d: L.call("lt_conv_transpose1d", x, w, b, s, p, op, g, d),
       lambda x, w, b, s, p, op, g, d: F.conv_transpose1d(x, w, b, s, p, op, g, d),
       [Sample(t((2, 3, 6)), t((3, 4, 3)), t((4,)), 1, 0, 0, 1, 1),
        Sample(t((1, 4, 5)), t((4, 2, 3)), None, 3, 1, 2, 2, 1, note="groups, output_padding"),
        Sample(t((2, 2, 7), F64), t((2, 3, 2), F64), t((6,), F64), 2, 0, 1, 2, 3, note="dilation"),
        Sample(t((3, 5)), t((3, 2, 2)), None, 2, 0, 0, 1, 1, note="no batch dim"),
        Sample(t((2, 6, 3), layout="t"), t((3, 2, 2)), t((2,)), 1, 1, 0, 1, 1, note="views"),
        Sample(t((1, 1, 1)), t((1, 1, 1)), None, 1, 0, 0, 1, 1, note="size 1"),
        Sample(t((2, 2, 4), np.int64), t((2, 3, 2), np.int64), t((3,), np.int64), 2, 0, 1, 1, 1, note="i64")],
       **CONV_TOL))

# ---- unfold, fold, pixel shuffles -----------------------------------------------

add(Op("unfold", lambda L, x, k, d, p, s: L.call("lt_unfold", x, two(k), two(d), two(p), two(s)),
       lambda x, k, d, p, s: F.unfold(x, k, d, p, s),
       [Sample(t((2, 3, 5, 5)), 2, 1, 0, 1), Sample(t((1, 2, 6, 7)), (3, 2), (1, 2), (1, 0), (2, 1)),
        Sample(t((2, 4, 4), F64), 3, 1, 1, 1, note="no batch dim"),
        Sample(t((1, 2, 5, 6), layout="t"), 2, 2, 1, 2, note="views"), Sample(t((1, 1, 1, 1)), 1, 1, 0, 1),
        Sample(t((0, 2, 3, 3)), 2, 1, 0, 1, note="empty batch"),
        Sample(Arg(np.array([[[[INF, -INF], [float("nan"), -0.0]]]], np.float32)), 1, 1, 1, 1, grad=False,
               note="edges"),
        Sample(t((1, 2, 2, 2)), 3, 1, 0, 1, note="window too big")],
       rtol=SUMS))

add(Op("fold", lambda L, x, o, k, d, p, s: L.call("lt_fold", x, two(o), two(k), two(d), two(p), two(s)),
       lambda x, o, k, d, p, s: F.fold(x, o, k, d, p, s),
       [Sample(t((2, 12, 16)), (5, 5), 2, 1, 0, 1), Sample(t((1, 12, 12)), (6, 7), (3, 2), (1, 2), (1, 0), (2, 1)),
        Sample(t((18, 16), F64), (4, 4), 3, 1, 1, 1, note="no batch dim"),
        Sample(t((1, 16, 4), layout="t"), (3, 3), 2, 1, 0, 1, note="views"),
        Sample(t((1, 1, 1)), (1, 1), 1, 1, 0, 1, note="size 1"),
        Sample(t((1, 12, 15)), (5, 5), 2, 1, 0, 1, note="wrong block count")],
       rtol=SUMS))

add(Op("pixel_shuffle", lambda L, x, r: L.call("lt_pixel_shuffle", x, r), lambda x, r: F.pixel_shuffle(x, r),
       [Sample(t((1, 8, 3, 3)), 2), Sample(t((2, 3, 18, 2, 2), F64), 3), Sample(t((9, 2, 3)), 3),
        Sample(t((1, 4, 3, 2), layout="t"), 2, note="views"), Sample(t((1, 1, 1, 1)), 1),
        Sample(t((1, 6, 2, 2)), 2, note="channels not divisible")]))
add(Op("pixel_unshuffle", lambda L, x, r: L.call("lt_pixel_unshuffle", x, r), lambda x, r: F.pixel_unshuffle(x, r),
       [Sample(t((1, 2, 6, 6)), 2), Sample(t((2, 3, 1, 6, 3), F64), 3), Sample(t((2, 4, 6)), 2),
        Sample(t((1, 2, 4, 6), layout="t"), 2, note="views"), Sample(t((1, 2, 5, 4)), 2, note="not divisible")]))

# ---- pooling ---------------------------------------------------------------------

NAN1 = Arg(np.array([[[[1.0, float("nan"), 3.0, 0.5], [2.0, -1.0, INF, 4.0], [-0.0, 0.0, -INF, 5.0]]]], np.float32))
NEG = Arg(np.array([[[[-INF, -INF, 1.0], [-INF, -INF, -INF], [2.0, -INF, -INF]]]], np.float32))

add(Op("max_pool1d", lambda L, x, k, s, p, d, c: L.call("lt_max_pool1d", x, k, s, p, d, c, "out"),
       lambda x, k, s, p, d, c: F.max_pool1d(x, k, s or None, p, d, c, return_indices=True),
       [Sample(t((2, 3, 8)), 2, 0, 0, 1, False), Sample(t((1, 2, 9)), 3, 2, 1, 1, True, note="ceil"),
        Sample(t((2, 3, 10), F64), 3, 1, 1, 2, False, note="dilation"),
        Sample(t((3, 7)), 2, 2, 1, 2, True, note="no batch dim"),
        Sample(t((2, 6, 3), layout="t"), 2, 0, 1, 1, True, note="views"),
        Sample(t((1, 1, 1)), 1, 0, 0, 1, False, note="size 1"),
        Sample(t((1, 2, 5)), 3, 3, 1, 1, True, note="ceil window"),
        Sample(t((1, 2, 5)), 3, 1, 2, 1, False, note="padding too big")]))
add(Op("max_pool2d_ext",
       lambda L, x, k, s, p, d, c: L.call("lt_max_pool2d_ext", x, two(k), two(s), two(p), two(d), c, "out"),
       lambda x, k, s, p, d, c: F.max_pool2d(x, k, s, p, d, c, return_indices=True),
       [Sample(t((2, 3, 7, 7)), 2, None, 0, 1, True, note="ceil"),
        Sample(t((1, 2, 8, 9)), 3, 2, 1, 2, False, note="dilation"),
        Sample(t((1, 2, 7, 6), F64), (3, 2), (2, 1), (1, 1), (1, 2), True, note="ceil, dilation"),
        Sample(t((2, 6, 5)), 2, 2, 1, 1, True, note="no batch dim"),
        Sample(t((1, 2, 6, 5), layout="t"), 3, 2, 1, 1, True, note="views"),
        Sample(t((2, 3, 6, 6)), 2, None, 0, 1, False, note="fast path"),
        Sample(t((1, 1, 1, 1)), 1, None, 0, 1, True, note="size 1"),
        Sample(NEG, 2, 2, 1, 1, True, grad=False, note="-inf windows"),
        Sample(NEG, 2, 1, 1, 2, False, grad=False, note="-inf windows, dilation"),
        Sample(NAN1, 2, 2, 1, 1, True, grad=False, note="edges")]))
add(Op("avg_pool1d", lambda L, x, k, s, p, c, i: L.call("lt_avg_pool1d", x, k, s, p, c, i),
       lambda x, k, s, p, c, i: F.avg_pool1d(x, k, s or None, p, c, i),
       [Sample(t((2, 3, 8)), 2, 0, 0, False, True), Sample(t((1, 2, 9)), 3, 2, 1, True, True, note="ceil"),
        Sample(t((1, 2, 9)), 3, 2, 1, True, False, note="ceil, no pad count"),
        Sample(t((2, 3, 10), F64), 4, 3, 2, False, False),
        Sample(t((3, 7)), 2, 2, 1, True, True, note="no batch dim"),
        Sample(t((2, 6, 3), layout="t"), 2, 0, 1, True, False, note="views"),
        Sample(t((1, 1, 1)), 1, 0, 0, False, True, note="size 1"),
        Sample(t((1, 2, 9), np.int64), 3, 2, 1, True, False, note="i64, ceil")],
       rtol=SUMS))
add(Op("avg_pool2d_ext",
       lambda L, x, k, s, p, c, i, dv: L.call("lt_avg_pool2d_ext", x, two(k), two(s), two(p), c, i, dv),
       lambda x, k, s, p, c, i, dv: F.avg_pool2d(x, k, s, p, c, i, dv or None),
       [Sample(t((2, 3, 7, 7)), 2, None, 0, True, True, 0, note="ceil"),
        Sample(t((1, 2, 7, 8)), 3, 2, 1, True, True, 0, note="ceil, pad count"),
        Sample(t((1, 2, 7, 8)), 3, 2, 1, True, False, 0, note="ceil, no pad count"),
        Sample(t((1, 2, 6, 7), F64), (3, 2), (2, 1), (1, 1), False, True, 5, note="divisor_override"),
        Sample(t((2, 6, 5)), 2, 2, 1, True, False, 0, note="no batch dim"),
        Sample(t((1, 2, 6, 5), layout="t"), 3, 2, 1, True, True, 0, note="views"),
        Sample(t((2, 3, 6, 6)), 2, None, 0, False, True, 0, note="fast path"),
        Sample(t((1, 1, 1, 1)), 1, None, 0, True, True, 0, note="size 1"),
        Sample(t((1, 2, 7, 8), np.int64), 3, 2, 1, True, False, 0, note="i64, ceil"),
        Sample(t((1, 2, 6, 7), np.int64), (3, 2), (2, 1), (1, 1), False, True, 5, note="i64, divisor_override")],
       rtol=SUMS))

ADAPTIVE_2D = [Sample(t((2, 3, 7, 9)), (3, 4)), Sample(t((1, 2, 6, 6), F64), (6, 6), note="identity"),
               Sample(t((1, 2, 5, 7)), (1, 1), note="global"), Sample(t((3, 5, 4)), (2, 3), note="no batch dim"),
               Sample(t((1, 2, 6, 5), layout="t"), (4, 3), note="views"),
               Sample(t((1, 2, 3, 4)), (5, 7), note="more cells than inputs"),
               Sample(t((1, 1, 1, 1)), (1, 1), note="size 1"),
               Sample(NAN1, (2, 3), grad=False, note="edges")]
ADAPTIVE_1D = [Sample(t((2, 3, 10)), 4), Sample(t((1, 2, 7), F64), 7, note="identity"),
               Sample(t((3, 9)), 2, note="no batch dim"), Sample(t((2, 5, 3), layout="t"), 2, note="views"),
               Sample(t((1, 2, 3)), 5, note="more cells than inputs"), Sample(t((1, 1, 1)), 1, note="size 1")]
add(Op("adaptive_avg_pool2d", lambda L, x, o: L.call("lt_adaptive_avg_pool2d", x, list(o)),
       lambda x, o: F.adaptive_avg_pool2d(x, o), ADAPTIVE_2D, rtol=SUMS))
add(Op("adaptive_avg_pool1d", lambda L, x, o: L.call("lt_adaptive_avg_pool1d", x, o),
       lambda x, o: F.adaptive_avg_pool1d(x, o), ADAPTIVE_1D, rtol=SUMS))
add(Op("adaptive_max_pool2d", lambda L, x, o: L.call("lt_adaptive_max_pool2d", x, list(o), "out"),
       lambda x, o: F.adaptive_max_pool2d(x, o, return_indices=True), ADAPTIVE_2D))
add(Op("adaptive_max_pool1d", lambda L, x, o: L.call("lt_adaptive_max_pool1d", x, o, "out"),
       lambda x, o: F.adaptive_max_pool1d(x, o, return_indices=True), ADAPTIVE_1D))

# ---- interpolate -------------------------------------------------------------------

NEAREST, LINEAR, BILINEAR = 0, 1, 2
MODES = {NEAREST: "nearest", LINEAR: "linear", BILINEAR: "bilinear"}


def interp_ref(x, size, scale, mode, align):
    kw = {} if mode == NEAREST else {"align_corners": align}
    return F.interpolate(x, size=size, scale_factor=scale, mode=MODES[mode], **kw)


def interp_samples(mode, align):
    shape2 = mode != LINEAR
    x = (lambda *s: t(s)) if shape2 else (lambda *s: t(s[:3]))
    out = [Sample(x(2, 3, 4, 5), (7, 9) if shape2 else (9,), None, mode, align, note="up"),
           Sample(x(1, 2, 8, 9), (3, 4) if shape2 else (4,), None, mode, align, note="down"),
           Sample(x(1, 2, 4, 4), None, (2.0, 2.0) if shape2 else (2.0,), mode, align, note="scale 2"),
           Sample(x(1, 2, 5, 6), None, (1.7, 0.6) if shape2 else (1.7,), mode, align, note="scale"),
           Sample(x(1, 2, 3, 3), (1, 1) if shape2 else (1,), None, mode, align, note="to 1"),
           Sample(x(1, 1, 1, 1), (3, 2) if shape2 else (3,), None, mode, align, note="from 1"),
           Sample(t((1, 2, 5, 4) if shape2 else (1, 4, 5), layout="t"), (6, 6) if shape2 else (8,), None, mode,
                  align, note="views"),
           Sample(t((1, 2, 3, 5) if shape2 else (1, 2, 5), F64), (5, 9) if shape2 else (9,), None, mode, align,
                  note="f64")]
    if mode == NEAREST:
        out.append(Sample(t((2, 3, 5)), (8,), None, mode, align, note="1-d"))
        out.append(Sample(t((2, 3, 5)), None, (0.7,), mode, align, note="1-d scale"))
    return out


for mode, align in ((NEAREST, False), (LINEAR, False), (LINEAR, True), (BILINEAR, False), (BILINEAR, True)):
    add(Op(f"interpolate {MODES[mode]}{' align_corners' if align else ''}",
           lambda L, x, size, scale, m, a: L.call("lt_interpolate", x, None if size is None else list(size),
                                                   None if scale is None else list(scale), m, a),
           interp_ref, interp_samples(mode, align), rtol={"float32": 1e-6}, grad_rtol={"float32": 1e-5}))
