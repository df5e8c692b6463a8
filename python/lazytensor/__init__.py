"""lazytensor: a PyTorch-like Python front end over the lazytensor C core.

    import lazytensor as lt
    x = lt.randn(4, 3, device="lazy", requires_grad=True)
    (x * 2).sum().backward()
    lt.mark_step()

Everything below the API (ops, shape rules, gradients, layers, optimizers,
the lazy device and its compiler) is the C library's; this package only
binds it (lazytensor._C) and adds what is Python-specific.
"""
from . import _C
from ._tensor import Tensor
from ._C import (dtype, device, float32, float64, int32, int64, uint8, bfloat16, float16,
                 manual_seed, promote_types, mark_step, metrics_report, metrics_counter,
                 metrics_reset, set_num_threads, get_num_threads)
from ._C import grad_enabled as is_grad_enabled, barrier as sync
from ._C import bool  # noqa: A004 (torch's name)
from ._functions import *  # noqa: F401,F403
from ._functions import __all__ as _function_names
from .serialization import save, load
from . import nn, optim, data  # noqa: E402

float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001

__version__ = _C.version

__all__ = ["Tensor", "dtype", "device", "float32", "float64", "int32", "int64", "uint8", "bool",
           "bfloat16", "float16", "manual_seed", "mark_step", "sync", "metrics_report", "save",
           "load", "nn", "optim", "data"] + list(_function_names)
