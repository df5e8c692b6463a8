"""ltlib.py - a thin ctypes binding of liblazytensor.so for the differential
suite: tensors to and from NumPy, device and backend selection, scopes,
autograd, and a generic call of any public function by name."""
import ctypes
import numpy as np

# lt_dtype values (include/lazytensor.h) and their NumPy / torch names
F32, F64, I32, I64, U8, BOOL, BF16, F16 = range(8)
NP_OF = {F32: np.float32, F64: np.float64, I32: np.int32, I64: np.int64, U8: np.uint8,
         BOOL: np.bool_, F16: np.float16}
DT_OF_NP = {np.dtype(v): k for k, v in NP_OF.items()}
NAME_OF = {F32: "f32", F64: "f64", I32: "i32", I64: "i64", U8: "u8", BOOL: "bool", BF16: "bf16",
           F16: "f16"}

DEVICE_CPU, DEVICE_LAZY = 0, 1


class Device(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("index", ctypes.c_int)]


class LtError(Exception):
    """A public call returned NULL or a failing status."""


class Lib:
    """The library plus helpers. Public functions are reached as attributes:
    lib.lt_add(a, b) returns a tensor handle (an int) or raises LtError."""

    def __init__(self, path):
        self.dll = ctypes.CDLL(path)
        self._declare()
        self._fns = {}

    def _declare(self):
        d = self.dll
        p, i64p = ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
        sig = {
            "lt_last_error": (ctypes.c_char_p, []),
            "lt_clear_error": (None, []),
            "lt_from_data": (p, [p, i64p, ctypes.c_int, ctypes.c_int, Device]),
            "lt_copy_to_host": (ctypes.c_int, [p, p, ctypes.c_size_t]),
            "lt_tensor_ndim": (ctypes.c_int, [p]),
            "lt_tensor_shape": (i64p, [p]),
            "lt_tensor_dtype": (ctypes.c_int, [p]),
            "lt_tensor_numel": (ctypes.c_int64, [p]),
            "lt_scope_begin": (None, []),
            "lt_scope_end": (ctypes.c_int, []),
            "lt_mark_step": (ctypes.c_int, []),
            "lt_lazy_discard": (ctypes.c_int64, []),
            "lt_lazy_set_backend": (ctypes.c_int, [ctypes.c_char_p]),
            "lt_set_requires_grad": (ctypes.c_int, [p, ctypes.c_bool]),
            "lt_backward": (ctypes.c_int, [p, p]),
            "lt_grad": (p, [p]),
            "lt_metrics_counter": (ctypes.c_int64, [ctypes.c_char_p]),
            "lt_metrics_reset": (None, []),
        }
        for name, (res, args) in sig.items():
            fn = getattr(d, name)
            fn.restype, fn.argtypes = res, args

    # ---- errors ----
    def last_error(self):
        return self.dll.lt_last_error().decode(errors="replace")

    def check(self, handle_or_status, what):
        """Raises LtError for a NULL handle or a non-zero status."""
        if handle_or_status is None or handle_or_status is False:
            raise LtError(f"{what}: {self.last_error()}")
        if isinstance(handle_or_status, int) and handle_or_status != 0 and what.endswith("!status"):
            raise LtError(f"{what}: {self.last_error()}")
        return handle_or_status

    def status(self, st, what):
        if st != 0:
            raise LtError(f"{what}: {self.last_error()}")

    # ---- generic calls: tensors are handles (ints), other args are given
    #      as ctypes values or Python ints/floats/bools per a signature ----
    def fn(self, name, restype, argtypes):
        key = name
        f = self._fns.get(key)
        if f is None:
            f = getattr(self.dll, name)
            f.restype, f.argtypes = restype, argtypes
            self._fns[key] = f
        return f

    # ---- tensors ----
    def tensor(self, arr, device):
        arr = np.require(arr, requirements="C")  # (ascontiguousarray makes 0-d 1-d)
        dt = DT_OF_NP[arr.dtype]
        dims = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
        buf = arr if arr.size else np.zeros(1, arr.dtype)
        h = self.dll.lt_from_data(buf.ctypes.data, dims, arr.ndim, dt, device)
        if not h:
            raise LtError(f"lt_from_data: {self.last_error()}")
        return h

    def shape(self, h):
        nd = self.dll.lt_tensor_ndim(h)
        sp = self.dll.lt_tensor_shape(h)
        return tuple(sp[k] for k in range(nd))

    def dtype(self, h):
        return self.dll.lt_tensor_dtype(h)

    def numpy(self, h):
        dt = self.dtype(h)
        if dt not in NP_OF:
            raise LtError(f"numpy: dtype {NAME_OF.get(dt, dt)} has no NumPy type")
        out = np.empty(self.shape(h), NP_OF[dt])
        buf = out if out.size else np.zeros(1, out.dtype)
        st = self.dll.lt_copy_to_host(h, buf.ctypes.data, buf.nbytes)
        if st != 0:
            raise LtError(f"lt_copy_to_host: {self.last_error()}")
        return out


def device(kind):
    return Device(kind, 0)


# ---- calling any public function by name, typed from the header ----------

import re

_SCALARS = {"double": ctypes.c_double, "int": ctypes.c_int, "int64_t": ctypes.c_int64, "bool": ctypes.c_bool,
            "lt_dtype": ctypes.c_int, "lt_loss_reduction": ctypes.c_int, "uint64_t": ctypes.c_uint64,
            "size_t": ctypes.c_size_t}


def _param_kind(decl):
    """Classifies one C parameter declaration of lazytensor.h."""
    d = " ".join(decl.replace("*", " * ").split())
    if d.startswith("lt_tensor * const *"):
        return "tensors"
    if d.startswith("lt_tensor * *"):
        return "out"
    if d.startswith("lt_tensor *"):
        return "tensor"
    if d.startswith("const int64_t *"):
        return "i64s"
    if d.startswith("const int *"):
        return "ints"
    if d.startswith("const double *"):
        return "f64s"
    if d.startswith("lt_device"):
        return "device"
    if d.startswith("const char *"):
        return "str"
    t = d.split()[0] if not d.startswith("const ") else d.split()[1]
    if t in _SCALARS and "*" not in d:
        return t
    return None


def parse_header(path):
    """{name: (return kind, [param kinds])} for every function of the header
    whose return type and parameters the binding knows."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    sigs = {}
    for m in re.finditer(r"(lt_tensor\s*\*|lt_status|int|int64_t|double|bool)\s*(lt_\w+)\s*\(([^;{]*?)\)\s*;",
                         text):
        ret, name, params = m.group(1).replace(" ", ""), m.group(2), m.group(3)
        kinds = []
        if params.strip() not in ("void", ""):
            for p in params.split(","):
                k = _param_kind(p.strip())
                if k is None:
                    break
                kinds.append(k)
            else:
                sigs[name] = (ret, kinds)
            continue
        sigs[name] = (ret, [])
    return sigs


_ARGTYPE = {"tensor": ctypes.c_void_p, "tensors": ctypes.c_void_p, "out": ctypes.c_void_p,
            "i64s": ctypes.c_void_p, "ints": ctypes.c_void_p, "f64s": ctypes.c_void_p, "device": Device,
            "str": ctypes.c_char_p}
_RESTYPE = {"lt_tensor*": ctypes.c_void_p, "lt_status": ctypes.c_int, "int": ctypes.c_int,
            "int64_t": ctypes.c_int64, "double": ctypes.c_double, "bool": ctypes.c_bool}


def _bind(self, header):
    self.sigs = parse_header(header)


def _call(self, name, *args):
    """Calls public function `name`. Tensors are handles; "out" for an
    lt_tensor ** parameter returns its value after the result; lists become
    int, int64 or double arrays. A NULL result or failing status raises LtError."""
    ret, kinds = self.sigs[name]
    if len(args) != len(kinds):
        raise TypeError(f"{name}: {len(args)} arguments, the header has {len(kinds)}")
    f = self._fns.get(name)
    if f is None:
        f = getattr(self.dll, name)
        f.restype = _RESTYPE[ret]
        f.argtypes = [_ARGTYPE.get(k) or _SCALARS[k] for k in kinds]
        self._fns[name] = f
    conv, outs = [], []
    for k, a in zip(kinds, args):
        if k == "out":
            if a == "out":
                cell = ctypes.c_void_p()
                outs.append(cell)
                conv.append(ctypes.addressof(cell))
            else:
                conv.append(a)
        elif k == "tensors":
            conv.append(ctypes.cast((ctypes.c_void_p * max(len(a), 1))(*a), ctypes.c_void_p))
        elif k in ("i64s", "ints", "f64s"):
            if a is None:
                conv.append(None)
            else:
                ct = {"i64s": ctypes.c_int64, "ints": ctypes.c_int, "f64s": ctypes.c_double}[k]
                conv.append(ctypes.cast((ct * max(len(a), 1))(*a), ctypes.c_void_p))
        elif k == "str":
            conv.append(a.encode() if isinstance(a, str) else a)
        else:
            conv.append(a)
    r = f(*conv)
    if ret == "lt_tensor*" and not r:
        raise LtError(f"{name}: {self.last_error()}")
    if ret == "lt_status" and r != 0:
        raise LtError(f"{name}: {self.last_error()}")
    if ret == "int" and name in ("lt_split", "lt_chunk") and r < 0:
        raise LtError(f"{name}: {self.last_error()}")
    if outs:
        for c in outs:
            if not c.value:
                raise LtError(f"{name}: no handle in an out parameter: {self.last_error()}")
        return (r,) + tuple(c.value for c in outs)
    return r


Lib.bind_header = _bind
Lib.call = _call
