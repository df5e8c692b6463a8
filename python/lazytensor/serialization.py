"""save / load in the safetensors format, the format the C library writes
(lt_save_safetensors), so checkpoints move between C, Python and PyTorch.

Writing and reading the tensors is the C library's; Python only reads the
file's JSON header to learn what tensors to make before loading into them.
"""
import json
import struct

from . import _C

_DTYPES = {"F32": _C.float32, "F64": _C.float64, "I32": _C.int32, "I64": _C.int64, "U8": _C.uint8,
           "BOOL": _C.bool, "BF16": _C.bfloat16, "F16": _C.float16}
_HEADER_LIMIT = 100 << 20  # the header is JSON text: far below this in practice


def save(tensors, path):
    """Writes a dict of name -> tensor to path (atomically)."""
    names = list(tensors)
    _C.save_safetensors(str(path), names, [tensors[n] for n in names])


def _header(path):
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: not a safetensors file (shorter than its 8-byte header size)")
        (size,) = struct.unpack("<Q", raw)
        if size > _HEADER_LIMIT:
            raise ValueError(f"{path}: header of {size} bytes is too large")
        header = json.loads(f.read(size))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is not a JSON object")
    header.pop("__metadata__", None)
    return header


def load(path, device=None):
    """Reads a safetensors file into a dict of name -> new tensor. The C
    library validates the whole file before anything is written."""
    entries = _header(str(path))
    names, tensors = [], []
    for name, info in entries.items():
        try:
            dtype, shape = _DTYPES[info["dtype"]], tuple(info["shape"])
        except (KeyError, TypeError) as e:
            raise ValueError(f"{path}: entry {name!r} has no valid dtype and shape") from e
        names.append(name)
        tensors.append(_C.empty(shape, dtype, "cpu"))
    _C.load_safetensors(str(path), names, tensors)
    if device is not None:
        tensors = [t.to(device) for t in tensors]
    return dict(zip(names, tensors))
