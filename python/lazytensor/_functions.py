"""Module-level functions of lazytensor: factories, interop, grad mode, the
lazy device. Each is one call into lazytensor._C; this file handles
PyTorch's keyword arguments."""
import builtins

from . import _C
from ._tensor import Tensor

__all__ = [
    "tensor", "as_tensor", "from_numpy", "from_dlpack", "empty", "zeros", "ones", "full", "rand",
    "randn", "randint", "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like",
    "empty_like", "rand_like", "randn_like", "cat", "concat", "stack", "where", "multinomial",
    "outer", "dot", "vdot", "kron", "addmm", "baddbmm", "addbmm",
    "no_grad", "ir_text", "ir_dot", "live_tensors", "backend", "set_backend",
]


def _size(size):
    """zeros(2, 3), zeros((2, 3)) and zeros([2, 3]) all mean shape (2, 3)."""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        return tuple(size[0])
    return tuple(size)


def _grad(t, requires_grad):
    return t.requires_grad_() if requires_grad else t


# ---- creation -------------------------------------------------------------

def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor with a copy of data (nested lists, numbers, numpy
    arrays or other buffers, tensors). Python floats give float32, ints
    int64 and bools bool, like torch."""
    if not isinstance(data, (list, tuple, _C._TensorBase)) and hasattr(data, "__array__") \
            and not hasattr(data, "__buffer__"):
        import numpy as np
        data = np.ascontiguousarray(data)
    return _grad(_C.tensor(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and dtype in (None, data.dtype) and device in (None, data.device):
        return data
    return tensor(data, dtype, device)


def from_numpy(array):
    """A cpu tensor sharing array's memory (no copy): writes show in both."""
    return _C.from_numpy(array)


def from_dlpack(ext):
    """A cpu tensor sharing the memory of a DLPack producer (an object with
    __dlpack__, such as a torch tensor or numpy array, or a capsule)."""
    capsule = ext.__dlpack__() if hasattr(ext, "__dlpack__") else ext
    return _C.from_dlpack_capsule(capsule)


def _factories(name):
    """zeros(*size, ...) and zeros_like(t, ...) over the C factory `name`."""
    fn = getattr(_C, name)

    def factory(*size, dtype=None, device=None, requires_grad=False):
        return _grad(fn(_size(size), dtype, device), requires_grad)

    def like(t, dtype=None, device=None, requires_grad=False):
        return _grad(fn(t.shape, dtype or t.dtype, device or t.device), requires_grad)

    factory.__name__, like.__name__ = name, name + "_like"
    return factory, like


for _name in ("empty", "zeros", "ones", "rand", "randn"):
    globals()[_name], globals()[_name + "_like"] = _factories(_name)


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return _C.bool
    return _C.int64 if isinstance(value, builtins.int) else _C.float32


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _scalar_dtype(fill_value)
    return _grad(_C.full(tuple(size) if not isinstance(size, builtins.int) else (size,), fill_value,
                         dtype, device), requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None):
    if high is None:
        low, high = 0, low
    return _C.randint(low, high, tuple(size), dtype, device)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = builtins.all(isinstance(v, builtins.int) for v in (start, end, step))
        dtype = _C.int64 if ints else _C.float32
    return _grad(_C.arange(start, end, step, dtype, device), requires_grad)


linspace = _C.linspace


def eye(n, m=None, dtype=None, device=None):
    return _C.eye(n, n if m is None else m, dtype, device)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return _grad(_C.full(t.shape, fill_value, dtype or t.dtype, device or t.device), requires_grad)


# ---- joining, selecting ---------------------------------------------------

def cat(tensors, dim=0):
    return _C.cat(list(tensors), dim)


concat = cat


def stack(tensors, dim=0):
    return _C.stack(list(tensors), dim)


where = _C.where  # where(condition, input, other), numbers next to the tensor
multinomial = _C.multinomial  # (input, num_samples, replacement=False)

# products built on matmul: outer(input, vec2), dot, vdot, kron, and
# addmm / baddbmm / addbmm(input, m1, m2, beta=1, alpha=1)
outer, dot, vdot, kron = _C.outer, _C.dot, _C.vdot, _C.kron
addmm, baddbmm, addbmm = _C.addmm, _C.baddbmm, _C.addbmm


# ---- every tensor method as a function: lazytensor.exp(x), ... -------------

_METHODS = [
    "neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
    "relu", "gelu", "silu", "erf", "sign", "floor", "ceil", "round", "reciprocal", "logical_not",
    "clone", "detach", "nonzero", "add", "sub", "mul", "div", "pow", "remainder", "maximum",
    "minimum", "logical_and", "logical_or", "matmul", "mm", "bmm", "eq", "ne", "lt", "le", "gt",
    "ge", "clamp", "sum", "mean", "prod", "amax", "amin", "all", "any", "logsumexp", "var", "std",
    "max", "min", "argmax", "argmin", "cumsum", "softmax", "log_softmax", "sort", "topk", "reshape",
    "permute", "transpose", "narrow", "select", "squeeze", "unsqueeze", "flatten", "diagonal",
    "split", "chunk", "unbind", "index_select", "gather", "scatter", "scatter_add", "masked_fill",
    "tril", "triu", "t",
]


def _method_function(name):
    def fn(input, *args, **kwargs):  # noqa: A002
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"lazytensor.{name}(x, ...) is x.{name}(...)."
    return fn


for _name in _METHODS:
    globals()[_name] = _method_function(_name)
__all__ += _METHODS


# ---- autograd ---------------------------------------------------------------

class no_grad:
    """`with lazytensor.no_grad():` (or as a decorator): ops record no tape."""

    def __enter__(self):
        _C.no_grad_begin()
        return self

    def __exit__(self, *exc):
        _C.no_grad_end()
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        return wrapper


# ---- the lazy device ------------------------------------------------------------

def ir_text(*tensors):
    """The pending IR graph behind tensors, in the paper's text form."""
    return _C.ir(list(tensors), False)


def ir_dot(*tensors):
    """The pending IR graph behind tensors as Graphviz DOT."""
    return _C.ir(list(tensors), True)


live_tensors = _C.live_tensors  # tensors that user code (Python objects included) holds


backend = _C.lazy_backend
set_backend = _C.lazy_set_backend  # "tiered", "cpu" (compiled C) or "interp"
