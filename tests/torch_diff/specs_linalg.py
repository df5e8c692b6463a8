"""specs_linalg.py - the products PyTorch builds on matmul: outer, dot,
vdot, addmm, baddbmm, addbmm and kron. Imported at the end of specs.py,
whose helpers it uses; its ops join specs.OPS."""
import numpy as np
import torch

from engine import Op, Sample
from samples import t
from specs import BLAS, add, call

F64, I64 = np.float64, np.int64

add(Op("outer", call("lt_outer"), torch.outer,
       [Sample(t((3,)), t((4,))), Sample(t((2,), F64), t((5,), F64)), Sample(t((3,), I64), t((2,), I64)),
        Sample(t((0,)), t((3,))), Sample(t((4,), layout="s"), t((1,)))], rtol=BLAS))
for name, ref in (("dot", torch.dot), ("vdot", torch.vdot)):
    add(Op(name, call(f"lt_{name}"), ref,
           [Sample(t((5,)), t((5,))), Sample(t((3,), F64), t((3,), F64)), Sample(t((4,), I64), t((4,), I64)),
            Sample(t((0,)), t((0,))), Sample(t((3,), layout="s"), t((3,)))], rtol=BLAS))
add(Op("addmm", call("lt_addmm"), lambda i, a, b, beta, alpha: torch.addmm(i, a, b, beta=beta, alpha=alpha),
       [Sample(t((3, 4)), t((3, 2)), t((2, 4)), 1.0, 1.0), Sample(t((4,)), t((3, 2)), t((2, 4)), 0.5, 2.0),
        Sample(t((3, 1), F64), t((3, 5), F64), t((5, 2), F64), -1.0, 0.25),
        Sample(t((3, 4)), t((2, 3), layout="t"), t((4, 2), layout="t"), 1.0, -1.0),
        Sample(t((2, 2), I64), t((2, 3), I64), t((3, 2), I64), 2.0, 3.0),
        Sample(t((3, 4)), t((3, 0)), t((0, 4)), 1.0, 1.0)], rtol=BLAS, grad_rtol={"float32": 1e-4}))
add(Op("baddbmm", call("lt_baddbmm"), lambda i, a, b, beta, alpha: torch.baddbmm(i, a, b, beta=beta, alpha=alpha),
       [Sample(t((2, 3, 4)), t((2, 3, 5)), t((2, 5, 4)), 1.0, 1.0),
        Sample(t((3, 4), F64), t((2, 3, 5), F64), t((2, 5, 4), F64), 0.5, -2.0),
        Sample(t((1, 1, 4)), t((2, 3, 5)), t((2, 5, 4)), 2.0, 0.5)], rtol=BLAS, grad_rtol={"float32": 1e-4}))
add(Op("addbmm", call("lt_addbmm"), lambda i, a, b, beta, alpha: torch.addbmm(i, a, b, beta=beta, alpha=alpha),
       [Sample(t((3, 4)), t((2, 3, 5)), t((2, 5, 4)), 1.0, 1.0),
        Sample(t((4,), F64), t((3, 2, 5), F64), t((3, 5, 4), F64), -0.5, 2.0)],
       rtol=BLAS, grad_rtol={"float32": 1e-4}))
add(Op("kron", call("lt_kron"), torch.kron,
       [Sample(t((2, 3)), t((3, 2))), Sample(t((2,)), t((2, 3))), Sample(t((2, 1, 2), F64), t((3, 2), F64)),
        Sample(t((2, 2), I64), t((2,), I64)), Sample(t((0, 2)), t((2, 2))),
        Sample(t((3, 2), layout="t"), t((2,)), note="transposed")],
       xfail=lambda s: ("torch 1.13's kron refuses a transposed view ('view size is not compatible'); lazytensor "
                        "computes it") if s.note == "transposed" else None))
