#!/usr/bin/env python3
"""The tensor functions of include/lazytensor.h that the op registry has no
row for (so that `import lazytensor` cannot call them by name).

    python3 tools/op_rows_missing.py [--lib build/liblazytensor.so]
                                     [--header include/lazytensor.h]

A tensor function returns lt_tensor * (or an int count of tensors written to
an out array) and takes a tensor, or makes one on a device (a factory).
The registry's names come from the library itself (lt_op_count, lt_op_at):
lt_<name> has a row when <name> is one. Prints the missing names, one a
line, then their count; exits 0 either way (a list to work from, not a
verdict: some functions take C arrays the registry cannot express).
"""
import argparse
import ctypes
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def header_tensor_functions(path):
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    names = []
    for m in re.finditer(r"(lt_tensor\s*\*|int)\s*(lt_\w+)\s*\(([^;{]*?)\)\s*;", text):
        ret, name, params = m.groups()
        returns_tensor = ret.startswith("lt_tensor")
        makes_tensors = ret == "int" and "lt_tensor **out" in params
        takes_tensor = "lt_tensor" in params or "lt_device" in params
        if (returns_tensor or makes_tensors) and takes_tensor:
            names.append(name)
    return names


def registry_names(lib):
    dll = ctypes.CDLL(lib)

    class Desc(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p)]  # the first field of lt_op_desc

    dll.lt_op_count.restype = ctypes.c_int
    dll.lt_op_at.restype = ctypes.POINTER(Desc)
    dll.lt_op_at.argtypes = [ctypes.c_int]
    return {dll.lt_op_at(i).contents.name.decode() for i in range(dll.lt_op_count())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(ROOT, "build", "liblazytensor.so"))
    ap.add_argument("--header", default=os.path.join(ROOT, "include", "lazytensor.h"))
    opt = ap.parse_args()
    rows = registry_names(opt.lib)
    missing = [n for n in header_tensor_functions(opt.header) if n[3:] not in rows]
    for n in missing:
        print(n)
    print(f"{len(missing)} tensor functions without a row ({len(rows)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
