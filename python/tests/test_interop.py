"""numpy and DLPack in both directions without copies (same data pointer),
and the memory staying alive as long as either side uses it."""
import gc

import numpy as np
import pytest
import torch

import lazytensor as lt


def ptr(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16])
def test_from_numpy_shares_memory(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    x = lt.from_numpy(a)
    assert x.data_ptr() == ptr(a)
    assert x.tolist() == a.tolist()
    a[0, 0] = 1  # numpy's writes show in the tensor
    assert x[0, 0].item() == 1
    if dtype is not np.bool_:
        x[2, 3] = 2  # and the tensor's in the array
        assert a[2, 3] == 2


def test_from_numpy_strided_and_lifetime():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = lt.from_numpy(a[:, 1::2])
    assert x.shape == (4, 3) and x.stride() == (6, 2)
    assert x.tolist() == a[:, 1::2].tolist()
    x_t = lt.from_numpy(a.T)
    assert x_t.tolist() == a.T.tolist()
    b = np.ones(5)
    y = lt.from_numpy(b)
    del b
    gc.collect()
    assert y.sum().item() == 5.0  # the tensor keeps the array alive


def test_from_numpy_refuses_negative_strides():
    with pytest.raises(RuntimeError, match="negative"):
        lt.from_numpy(np.arange(5.0)[::-1])


def test_numpy_is_a_view_on_cpu():
    x = lt.arange(6.0).view(2, 3)
    a = x.numpy()
    assert ptr(a) == x.data_ptr()
    a[1, 2] = -1.0
    assert x[1, 2].item() == -1.0
    t = x.T.numpy()  # strided views export their strides
    assert ptr(t) == x.data_ptr() and t.strides == (4, 12)
    del x
    gc.collect()
    assert a[1, 2] == -1.0  # the array keeps the memory alive


def test_numpy_from_lazy_is_a_copy():
    x = lt.ones(3, device="lazy") * 2
    assert x.numpy().tolist() == [2.0, 2.0, 2.0]
    assert np.asarray(x).dtype == np.float32


def test_tensor_copies_numpy():
    a = np.arange(4, dtype=np.int32)
    x = lt.tensor(a)
    assert x.dtype is lt.int32 and x.data_ptr() != ptr(a)
    a[0] = 9
    assert x[0].item() == 0
    assert lt.tensor(np.arange(6.0).reshape(2, 3)[:, ::2]).tolist() == [[0.0, 2.0], [3.0, 5.0]]


def test_dlpack_from_torch_zero_copy():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    x = lt.from_dlpack(t)
    assert x.data_ptr() == t.data_ptr() and x.dtype is lt.float32
    t[0, 1] = 42
    assert x[0, 1].item() == 42
    x[2, 0] = -5
    assert t[2, 0].item() == -5
    v = lt.from_dlpack(t.t())  # strided
    assert v.stride() == (1, 4) and v.tolist() == t.t().tolist()
    del t
    gc.collect()
    assert x.sum().item() == sum(range(12)) - 1 + 42 - 8 - 5


def test_dlpack_to_torch_zero_copy():
    x = lt.arange(6, dtype=lt.int64).view(2, 3)
    t = torch.from_dlpack(x)
    assert t.data_ptr() == x.data_ptr() and t.dtype == torch.int64
    t[1, 1] = 100
    assert x[1, 1].item() == 100
    tt = torch.from_dlpack(x.T)
    assert tt.stride() == (1, 3) and tt.tolist() == x.T.tolist()
    assert x.__dlpack_device__() == (1, 0)
    del x
    gc.collect()
    assert t.sum().item() == 0 + 1 + 2 + 3 + 100 + 5


def test_dlpack_with_numpy_both_ways():
    a = np.linspace(0, 1, 5)
    x = lt.from_dlpack(a)
    assert x.data_ptr() == ptr(a) and x.dtype is lt.float64
    b = np.from_dlpack(x)
    assert ptr(b) == ptr(a)


def test_dlpack_capsule_is_used_once():
    x = lt.ones(2)
    cap = x.__dlpack__()
    y = lt.from_dlpack(cap)
    assert y.data_ptr() == x.data_ptr()
    with pytest.raises(ValueError):
        lt.from_dlpack(cap)
    x.__dlpack__()  # a capsule nobody consumes frees itself


def test_dlpack_refuses_lazy():
    with pytest.raises(BufferError):
        lt.ones(2, device="lazy").__dlpack__()
