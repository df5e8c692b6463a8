"""specs_lapack.py - einsum and torch.linalg's LAPACK family: inv, solve,
det, slogdet, cholesky, qr, svd, svdvals, eigh and lstsq. Imported at the
end of specs.py; its ops join specs.OPS.

The LAPACK ops compute in f64, so f32 results differ from torch's f32
factorizations by their conditioning times f32's epsilon: the matrices
here are well conditioned (random plus a multiple of the identity) except
for the samples that test singular and ill-conditioned input on purpose.
Singular vectors and eigenvectors are compared up to their sign (|U|,
|V| and the product U diag(S) Vh), which is all that is defined."""
import numpy as np
import torch

from engine import Arg, Op, Sample
from samples import rng, t
from specs import add, call
from specs_reduce import matrix_samples, mnorm_ref

F32, F64, I64 = np.float32, np.float64, np.int64
# f32: torch factorizes in f32, lazytensor in f64 (see above)
LA = {"float32": 2e-4, "float64": 1e-9}
LA_ATOL = {"float32": 1e-5, "float64": 1e-11}


def mat(shape, dtype=F32, shift=None, layout="c", grad=None):
    """Random [-1, 1) matrices plus shift * I (shift None: the size)."""
    v = rng().uniform(-1.0, 1.0, shape)
    n = shape[-1]
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        v = v + (n if shift is None else shift) * np.eye(n)
    return Arg(v.astype(dtype), layout, grad)


def spd(shape, dtype=F32, layout="c"):
    """Symmetric positive-definite matrices M M^T + I."""
    m = rng().uniform(-1.0, 1.0, shape)
    v = m @ np.swapaxes(m, -1, -2) + np.eye(shape[-1])
    return Arg(v.astype(dtype), layout)


def exact(rows, dtype=F32, grad=None):
    return Arg(np.array(rows, dtype), "c", grad)


SINGULAR = [[1, 2, 3], [2, 4, 6], [1, 0, 1]]   # row 2 = 2 * row 1: exact in LU
HILBERT = [[1.0 / (i + j + 1) for j in range(4)] for i in range(4)]  # condition ~1.5e4


def square_samples(gen=mat):
    return [Sample(gen((3, 3))), Sample(gen((4, 4), F64)), Sample(gen((2, 3, 3))),
            Sample(gen((2, 1, 2, 2), F64)), Sample(gen((3, 3), layout="t"), note="transposed"),
            Sample(gen((1, 1))), Sample(gen((0, 0))), Sample(gen((2, 0, 0), F64)), Sample(gen((0, 3, 3)))]


# ---- einsum -------------------------------------------------------------------

def einsum_op(name, samples, **kw):
    add(Op(name, lambda L, eq, ops: L.call("lt_einsum", eq, ops, len(ops)),
           lambda eq, ops: torch.einsum(eq, *ops), samples, **kw))


EQS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(2, 3), (3, 2)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("ii->i", [(4, 4)]), ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("iij->j", [(3, 3, 2)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 3), (3, 2)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]), ("...ij->...ji", [(2, 2, 3, 4)]), ("i...->...", [(3, 2, 2)]),
    ("...ij->ij", [(2, 3, 4)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("Ab,bA", [(2, 3), (3, 2)]),
    ("ba", [(2, 3)]), ("bA", [(2, 3)]), ("i,i->i", [(1,), (3,)]), ("ij,jk", [(2, 1), (3, 4)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]), ("ij,kl->ijkl", [(2, 3), (2, 2)]), ("ii,ij->j", [(3, 3), (3, 2)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij,ij->", [(2, 2), (2, 2), (2, 2)]), ("ij,j->i", [(0, 3), (3,)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]), ("", [()]), (",->", [(), ()]), ("i,->i", [(3,), ()]),
    ("...,...->...", [(2, 3), (3,)]), ("i...j,j...->i...", [(2, 3, 4), (4, 3)]),
    ("abcdefgh,abcdefgh->abcdefgh", [(1, 2, 1, 2, 1, 2, 1, 2)] * 2), ("abcdefgh,abcdefgh->", [(2, 1, 2, 1, 2, 1, 2, 1)] * 2),
    ("bij,bjk->bik", [(0, 2, 3), (0, 3, 2)]), ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
]
einsum_op("einsum", [Sample(eq, [t(s) for s in shapes]) for eq, shapes in EQS] +
          [Sample("ij,jk->ik", [t((3, 4), F64), t((4, 2), F64)]),
           Sample("bij,bjk->bik", [t((2, 3, 4), I64), t((2, 4, 2), I64)]),
           Sample("ij,jk->ik", [t((4, 3), layout="t"), t((4, 3), layout="s")], note="non-contiguous"),
           Sample("ij,jk->ik", [t((3, 4)), t((4, 2), F64)], note="mixed dtypes"),
           Sample("ij,jk->ik", [t((3, 4)), t((3, 2))], note="size mismatch"),
           Sample("ij,jk->il", [t((3, 4)), t((4, 2))], note="unknown output letter"),
           Sample("ij,jk->ii", [t((3, 4)), t((4, 2))], note="repeated output letter"),
           Sample("ij->ij", [t((3, 4)), t((4, 2))], note="too few subscripts"),
           Sample("ijk->ij", [t((3, 4))], note="too many letters"),
           Sample("i.j->ij", [t((3, 4))], note="stray dot"),
           Sample("i1->i", [t((3, 4))], note="bad character"),
           Sample("ij->i->j", [t((3, 4))], note="two arrows"),
           Sample("ii->i", [t((3, 4))], note="diagonal of unequal sizes")],
          rtol={"float32": 1e-5, "float64": 1e-12})

# ---- inv, solve, det, slogdet ---------------------------------------------------------

add(Op("linalg_inv", call("lt_linalg_inv"), torch.linalg.inv,
       square_samples() + [Sample(exact(SINGULAR), note="singular"),
                           Sample(exact(HILBERT, F64), note="ill-conditioned"),
                           Sample(t((3,)), note="1-D"), Sample(mat((2, 3)), note="not square"),
                           Sample(t((3, 3), I64), note="integer")],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))

add(Op("linalg_solve", call("lt_linalg_solve"), torch.linalg.solve,
       [Sample(mat((3, 3)), t((3, 2))), Sample(mat((4, 4), F64), t((4,), F64)),
        Sample(mat((2, 3, 3)), t((2, 3)), note="batch of vectors"),
        Sample(mat((2, 3, 3)), t((3,)), note="one vector, batch of A"),
        Sample(mat((2, 1, 3, 3), F64), t((4, 3, 2), F64), note="broadcast batch"),
        Sample(mat((3, 3)), t((2, 3, 1)), note="B batched"),
        Sample(mat((3, 3), layout="t"), t((2, 3), layout="t"), note="transposed"),
        Sample(mat((1, 1)), t((1, 4))), Sample(mat((0, 0)), t((0, 2))), Sample(mat((3, 3)), t((3, 0))),
        Sample(exact(SINGULAR), t((3, 1)), note="singular"),
        Sample(mat((3, 3)), t((4, 2)), note="rows mismatch"),
        Sample(mat((3, 3)), t((3, 2), F64), note="mixed dtypes")],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))

DET_EXTRA = [Sample(exact(SINGULAR), grad=False, note="singular"),
             Sample(exact([[2.0, 1.0], [1.0, 0.5]], F64), grad=False, note="singular f64"),
             Sample(exact(HILBERT, F64), note="ill-conditioned"),
             Sample(mat((3, 3), shift=0), note="unshifted"), Sample(mat((3, 4)), note="not square")]
add(Op("linalg_det", call("lt_linalg_det"), torch.linalg.det, square_samples() + DET_EXTRA,
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))
add(Op("linalg_slogdet", lambda L, a: L.call("lt_linalg_slogdet", a, "out"), torch.linalg.slogdet,
       square_samples() + DET_EXTRA, rtol=LA, atol=LA_ATOL, grad=False))
# the gradient of log|det| (output 1): outputs swapped so that it comes first
add(Op("linalg_slogdet_logabsdet", lambda L, a: tuple(reversed(L.call("lt_linalg_slogdet", a, "out"))),
       lambda a: tuple(reversed(torch.linalg.slogdet(a))),
       square_samples() + DET_EXTRA[2:4], rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))

# ---- cholesky, qr, eigh -------------------------------------------------------------------

add(Op("linalg_cholesky", call("lt_linalg_cholesky"), torch.linalg.cholesky,
       square_samples(spd) + [Sample(exact([[1.0, 2.0], [2.0, 1.0]]), note="not positive-definite"),
                              Sample(exact([[4.0, 99.0], [2.0, 3.0]], F64), note="upper triangle ignored"),
                              Sample(mat((2, 3)), note="not square")],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))


def qr_samples():
    return [Sample(mat((4, 3))), Sample(mat((3, 5), F64)), Sample(mat((2, 4, 4))), Sample(mat((3, 3), layout="t")),
            Sample(mat((1, 1))), Sample(mat((3, 0))), Sample(mat((0, 2))), Sample(mat((2, 0, 3), F64)),
            Sample(exact(SINGULAR, F64), note="rank-deficient"), Sample(t((3,)), note="1-D")]


add(Op("linalg_qr", lambda L, a: L.call("lt_linalg_qr", a, "out"), torch.linalg.qr, qr_samples(),
       rtol=LA, atol={"float32": 1e-5, "float64": 1e-10}, grad=False))


def eigh_lt(L, a):
    vals, vecs = L.call("lt_linalg_eigh", a, "out")
    return vals, L.call("lt_abs", vecs)


def eigh_ref(a):
    vals, vecs = torch.linalg.eigh(a)
    return vals, vecs.abs()


def sym(shape, dtype=F32, layout="c"):
    """Symmetric matrices with well separated eigenvalues."""
    m = rng().uniform(-1.0, 1.0, shape)
    v = (m + np.swapaxes(m, -1, -2)) / 2 + np.diag(np.arange(shape[-1], dtype=float) * 2.0)
    return Arg(v.astype(dtype), layout)


add(Op("linalg_eigh", eigh_lt, eigh_ref,
       square_samples(sym) + [Sample(mat((3, 3), shift=0), note="not symmetric: the lower triangle is read"),
                              Sample(mat((2, 3)), note="not square")],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))

# ---- svd, svdvals, lstsq ----------------------------------------------------------------


def svd_lt(L, a):
    u, s, vh = L.call("lt_linalg_svd", a, "out", "out")
    us = L.call("lt_mul", u, L.call("lt_unsqueeze", s, -2))
    return s, L.call("lt_abs", u), L.call("lt_abs", vh), L.call("lt_matmul", us, vh)


def svd_ref(a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return s, u.abs(), vh.abs(), (u * s.unsqueeze(-2)) @ vh


def general(shape, dtype=F32, layout="c"):
    """Matrices with distinct singular values (so U and V are defined up to
    sign)."""
    v = rng().uniform(-1.0, 1.0, shape)
    k = min(shape[-2:])
    v[..., range(k), range(k)] += 3.0 * np.arange(1, k + 1)
    return Arg(v.astype(dtype), layout)


SVD_SAMPLES = [Sample(general((4, 3))), Sample(general((3, 5), F64)), Sample(general((2, 4, 4))),
               Sample(general((3, 3), layout="t")), Sample(general((1, 1))), Sample(general((3, 0))),
               Sample(general((2, 0, 3), F64)), Sample(t((3,)), note="1-D")]
add(Op("linalg_svd", svd_lt, svd_ref, SVD_SAMPLES, rtol=LA, atol=LA_ATOL, grad=False))
add(Op("linalg_svdvals", call("lt_linalg_svdvals"), torch.linalg.svdvals,
       SVD_SAMPLES + [Sample(exact(SINGULAR, F64), grad=False, note="rank-deficient"),
                      Sample(exact(HILBERT, F64), note="ill-conditioned")],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))


def lstsq_ref(a, b):
    return torch.linalg.lstsq(a, b).solution


add(Op("linalg_lstsq", call("lt_linalg_lstsq"), lstsq_ref,
       [Sample(general((5, 3)), t((5, 2))), Sample(general((4, 4), F64), t((4, 3), F64)),
        Sample(general((2, 6, 3), F64), t((2, 6, 1), F64)), Sample(general((3, 5)), t((3, 2)), note="under-determined"),
        Sample(general((4, 2)), t((4,)), note="vector"), Sample(general((2, 4, 2)), t((2, 4)), note="batch of vectors"),
        Sample(general((2, 4, 3), F64), t((4, 2), F64), note="B with one dim less: a vector by torch's rule"),
        Sample(general((4, 3), layout="t"), t((2, 4), layout="t"), note="transposed"),
        Sample(exact([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]], F64), t((3, 2), F64), note="rank-deficient"),
        Sample(general((0, 3)), t((0, 2))), Sample(general((3, 2)), t((4, 2)), note="rows mismatch")],
       rtol=LA, atol=LA_ATOL, grad=False))

# ---- matrix norms from singular values (ord 2, -2, 'nuc') ------------------------------------


def snorm_lt(L, x, o, dims=None, keepdim=False):
    d = dims or []
    if o == "nuc":
        return L.call("lt_matrix_norm_nuc", x, d, len(d), keepdim)
    return L.call("lt_matrix_norm", x, float(o), d, len(d), keepdim)


add(Op("matrix_norm_singular", snorm_lt, mnorm_ref, [s for o in (2, -2, "nuc") for s in matrix_samples(o)],
       rtol=LA, atol=LA_ATOL, grad_rtol={"float32": 5e-4}))
