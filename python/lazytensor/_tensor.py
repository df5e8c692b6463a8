"""lazytensor.Tensor: the C tensor handle plus the Python-only conveniences.

Every op is one call into the C core (lazytensor._C); this file only maps
PyTorch's method names and keyword conventions onto those calls.
"""
import operator

from . import _C

_FLOAT_NAMES = {
    "float": _C.float32, "double": _C.float64, "half": _C.float16, "bfloat16": _C.bfloat16,
    "long": _C.int64, "int": _C.int32, "bool": _C.bool, "byte": _C.uint8,
}


def _dtype_or_device(arg):
    """Splits a positional argument of .to() into (dtype, device)."""
    if isinstance(arg, _C.dtype):
        return arg, None
    if isinstance(arg, (str, _C.device)):
        return None, arg
    if isinstance(arg, _C._TensorBase):
        return arg.dtype, arg.device
    raise TypeError(f"to() expects a dtype, a device or a tensor, got {arg!r}")


class Tensor(_C._TensorBase):
    """A tensor of the lazytensor C library (cpu or lazy device)."""

    __slots__ = ()

    # ---- metadata: rows of the C registry under torch's names --------------
    numel = nelement = _C.tensor_numel
    dim = _C.tensor_ndim
    ndim = property(_C.tensor_ndim)
    is_contiguous = _C.tensor_is_contiguous
    storage_offset = _C.tensor_offset
    shares_storage = _C.tensor_shares_storage
    _c_refcount = _C.tensor_refcount
    T = property(lambda self: self.permute(tuple(range(self.ndim - 1, -1, -1))))
    data = property(_C.detach)  # the values without autograd
    is_lazy = property(lambda self: self.device.type == "lazy")

    # ---- arithmetic as methods (the operators live in C) -----------------
    def add(self, other, alpha=1):
        return self + other if alpha == 1 else self.add_scaled(other, alpha)

    def sub(self, other, alpha=1):
        return self - other if alpha == 1 else self.sub_scaled(other, alpha)

    def add_(self, other, alpha=1):
        return operator.iadd(self, other) if alpha == 1 else self.add_scaled_(other, alpha)

    def sub_(self, other, alpha=1):
        return operator.isub(self, other) if alpha == 1 else self.sub_scaled_(other, alpha)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, exponent):
        return self ** exponent

    def remainder(self, other):
        return self % other

    def mul_(self, other):
        return operator.imul(self, other)

    def div_(self, other):
        return operator.itruediv(self, other)

    def pow_(self, exponent):
        return operator.ipow(self, exponent)

    true_divide = div
    multiply = mul
    subtract = sub
    mm = bmm = _C._TensorBase.matmul

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def lt(self, other):
        return self < other

    def le(self, other):
        return self <= other

    def gt(self, other):
        return self > other

    def ge(self, other):
        return self >= other

    def __rmatmul__(self, other):
        return NotImplemented

    def __floordiv__(self, other):
        raise TypeError("floor division is not in the C API (use (a / b).floor())")

    __rfloordiv__ = __floordiv__

    def where(self, condition, other):
        return _C.where(condition, self, other)

    def masked_fill_(self, mask, value):
        return self.copy_(self.masked_fill(mask, value))

    def scatter(self, dim, index, src):
        if not isinstance(src, _C._TensorBase):  # a value for every index
            src = _C.full(index.shape, src, self.dtype, self.device)
        return _C.scatter(self, dim, index, src)

    # ---- torch's overloads of one name -------------------------------------
    def max(self, dim=None, keepdim=False):
        if dim is None:
            return self.amax()
        return self.maximum(dim) if isinstance(dim, _C._TensorBase) else self.max_dim(dim, keepdim)

    def min(self, dim=None, keepdim=False):
        if dim is None:
            return self.amin()
        return self.minimum(dim) if isinstance(dim, _C._TensorBase) else self.min_dim(dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        if dim is None:  # over all elements, like torch
            return _C.argmax(self.reshape(-1), 0)
        return _C.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        if dim is None:
            return _C.argmin(self.reshape(-1), 0)
        return _C.argmin(self, dim, keepdim)

    def var(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return _C.var(self, dim, int(unbiased) if correction is None else correction, keepdim)

    def std(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return _C.std(self, dim, int(unbiased) if correction is None else correction, keepdim)

    # ---- shapes ------------------------------------------------------------
    def squeeze(self, dim=None):
        return self.squeeze_all() if dim is None else _C.squeeze(self, dim)

    def t(self):
        return self if self.ndim < 2 else self.transpose(0, 1)

    def unbind(self, dim=0):
        return tuple(self.select(dim, i) for i in range(self.shape[dim]))

    def expand_as(self, other):
        return self.expand(other.shape)

    def view_as(self, other):
        return self.view(other.shape)

    def reshape_as(self, other):
        return self.reshape(other.shape)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    # ---- reductions with a dtype ------------------------------------------
    def sum(self, dim=None, keepdim=False, dtype=None):
        src = self if dtype is None else self.to(dtype)
        return _C._TensorBase.sum(src, dim, keepdim)

    def mean(self, dim=None, keepdim=False, dtype=None):
        src = self if dtype is None else self.to(dtype)
        return _C._TensorBase.mean(src, dim, keepdim)

    # ---- conversions ------------------------------------------------------
    def to(self, *args, dtype=None, device=None, copy=False):
        for a in args:
            d, dev = _dtype_or_device(a)
            dtype = dtype if d is None else d
            device = device if dev is None else dev
        out = self
        if device is not None:
            out = out._to_device(device)
        if dtype is not None:
            out = out._to_dtype(dtype)
        if copy and out is self:
            out = self.clone()
        return out

    def cpu(self):
        return self._to_device("cpu")

    def type_as(self, other):
        return self._to_dtype(other.dtype)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def element_size(self):
        return self.dtype.itemsize

    def numpy(self):
        """The values as a numpy array: on cpu the tensor's own memory (no
        copy, like torch), on the lazy device a copy."""
        import numpy as np
        src = self if self.device.type == "cpu" else self._to_device("cpu")
        if src.dtype is _C.bfloat16:
            raise TypeError("numpy has no bfloat16: convert with .float() first")
        return np.asarray(src)

    def __array__(self, dtype=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __reduce__(self):
        return (_rebuild, (self.tolist(), self.dtype.code, str(self.device), self.requires_grad))


Tensor = _C._set_tensor_class(Tensor)  # the same class, untracked by the cycle collector
for _name, _dt in _FLOAT_NAMES.items():
    setattr(Tensor, _name, (lambda dt: lambda self: self._to_dtype(dt))(_dt))


def _rebuild(values, code, device, requires_grad):
    dtypes = [_C.float32, _C.float64, _C.int32, _C.int64, _C.uint8, _C.bool, _C.bfloat16, _C.float16]
    t = _C.tensor(values, dtypes[code], device)
    return t.requires_grad_() if requires_grad else t

