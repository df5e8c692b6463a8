#!/usr/bin/env python3
"""Checks a safetensors file written by tests/test_checkpoint.c with PyTorch.

The file is read by hand (struct + json + torch.frombuffer; the safetensors
package is not needed), its layout is validated (u64 little-endian header
length, a multiple of 8; data_offsets tiling the data section), and every
tensor is compared bit for bit with the value PyTorch computes itself:

  w  f32  [3, 4]  arange(12).reshape(3, 4) * 0.5
  b  i64  [2]     [-1, 2]
  h  bf16 [5]     [1.0, -2.5, 0.15625, 65536.0, -0.0078125]
  f  f16  [4]     [0.5, -1.25, 65504.0, 6.103515625e-05]
  d  f64  [2, 3]  arange(1, 7).reshape(2, 3) / 3
  i  i32  [2, 1]  [[-7], [2147483647]]
  u  u8   [3]     [0, 255, 128]
  m  bool [3]     [True, False, True]
  s  f32  []      42.0
  e  f32  [0, 3]  (empty)

Usage: safetensors_torch_check.py FILE. Exits non-zero on any mismatch.
"""
import json
import struct
import sys

import torch

DTYPES = {
    "F32": torch.float32,
    "F64": torch.float64,
    "I32": torch.int32,
    "I64": torch.int64,
    "U8": torch.uint8,
    "BOOL": torch.bool,
    "BF16": torch.bfloat16,
    "F16": torch.float16,
}


def expected():
    return {
        "w": torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5,
        "b": torch.tensor([-1, 2], dtype=torch.int64),
        "h": torch.tensor([1.0, -2.5, 0.15625, 65536.0, -0.0078125], dtype=torch.bfloat16),
        "f": torch.tensor([0.5, -1.25, 65504.0, 6.103515625e-05], dtype=torch.float16),
        "d": torch.arange(1, 7, dtype=torch.float64).reshape(2, 3) / 3,
        "i": torch.tensor([[-7], [2147483647]], dtype=torch.int32),
        "u": torch.tensor([0, 255, 128], dtype=torch.uint8),
        "m": torch.tensor([True, False, True]),
        "s": torch.tensor(42.0, dtype=torch.float32),
        "e": torch.zeros(0, 3, dtype=torch.float32),
    }


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    if n % 8 != 0:
        raise ValueError(f"header length {n} is not a multiple of 8")
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    data = raw[8 + n :]
    header.pop("__metadata__", None)
    spans = sorted((info["data_offsets"], name) for name, info in header.items())
    pos = 0
    for (begin, end), name in spans:
        if begin != pos or end < begin:
            raise ValueError(f"tensor {name}: data_offsets [{begin}, {end}] do not follow {pos}")
        pos = end
    if pos != len(data):
        raise ValueError(f"data section has {len(data)} bytes, header describes {pos}")
    tensors = {}
    for name, info in header.items():
        dtype = DTYPES[info["dtype"]]
        shape = info["shape"]
        begin, end = info["data_offsets"]
        if end == begin:
            tensors[name] = torch.empty(shape, dtype=dtype)
        else:
            buf = bytearray(data[begin:end])
            tensors[name] = torch.frombuffer(buf, dtype=dtype).reshape(shape)
    return tensors


def same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        int_type = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        return torch.equal(a.contiguous().view(int_type), b.contiguous().view(int_type))
    return torch.equal(a, b)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    got = read_safetensors(sys.argv[1])
    want = expected()
    ok = True
    if set(got) != set(want):
        print(f"names differ: got {sorted(got)}, expected {sorted(want)}")
        ok = False
    for name, w in want.items():
        g = got.get(name)
        if g is None:
            continue
        if not same_bits(g, w):
            print(f"tensor {name}: got {g!r}, expected {w!r}")
            ok = False
    if ok:
        print(f"safetensors_torch_check: {len(want)} tensors match PyTorch")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
