"""Shared helpers of the Python front end's tests: inputs made once in
numpy and given to both lazytensor and torch, and comparisons of values,
dtypes and gradients."""
import numpy as np
import pytest
import torch

import lazytensor as lt

# The lazy device runs on the interpreter backend in most tests: the graphs
# are the same, and no C compiler runs for each new graph. test_lazy.py
# checks the compiled backend.
lt.set_backend("interp")

DEVICES = ["cpu", "lazy"]

TORCH_DTYPES = {
    lt.float32: torch.float32, lt.float64: torch.float64, lt.int32: torch.int32,
    lt.int64: torch.int64, lt.uint8: torch.uint8, lt.bool: torch.bool,
    lt.bfloat16: torch.bfloat16, lt.float16: torch.float16,
}


def torch_dtype(dt):
    return TORCH_DTYPES[dt]


def values(t):
    """The values of a lazytensor tensor as numpy (a copy)."""
    return np.array(t.to("cpu").tolist(), dtype=np.float64).reshape(tuple(t.shape))


def assert_same(got, want, rtol=1e-5, atol=1e-6, check_dtype=True):
    """got (lazytensor) equals want (torch) in shape, dtype and values."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, rtol, atol, check_dtype)
        return
    assert tuple(got.shape) == tuple(want.shape), f"shape {tuple(got.shape)} != torch's {tuple(want.shape)}"
    if check_dtype:
        assert torch_dtype(got.dtype) == want.dtype, f"dtype {got.dtype} != torch's {want.dtype}"
    np.testing.assert_allclose(values(got), want.detach().double().numpy(), rtol=rtol, atol=atol)


def pair(array, device, requires_grad=False):
    """The same values as a lazytensor tensor on device and a torch tensor."""
    a = np.ascontiguousarray(array)
    x = lt.tensor(a, device=device)
    t = torch.tensor(a)
    if requires_grad:
        x.requires_grad_()
        t.requires_grad_()
    return x, t


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param
