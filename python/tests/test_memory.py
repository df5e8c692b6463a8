"""Python references own C references: after a training loop (and after
the usual Python idioms) the C library's live tensors and the Python
reference counts return to where they started."""
import gc
import sys

import numpy as np
import pytest
import torch

import lazytensor as lt
from lazytensor import nn


def _settle():
    gc.collect()
    lt.sync()


def train(device, steps):
    lt.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16, device=device), nn.ReLU(), nn.Linear(16, 3, device=device))
    opt = lt.optim.Adam(model.parameters(), lr=1e-2)
    x = lt.randn(32, 8, device=device)
    y = lt.randint(0, 3, (32,), device=device)
    losses = []
    for _ in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        lt.mark_step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("device", ["cpu", "lazy"])
def test_training_loop_returns_live_tensors_to_start(device):
    _settle()
    before = lt.live_tensors()
    handles_before = lt._C.live_tensor_count()
    losses = train(device, 5)
    assert losses[-1] < losses[0]
    _settle()
    assert lt.live_tensors() == before, lt._C.live_tensor_report()
    assert lt._C.live_tensor_count() == handles_before


def test_steady_state_inside_a_loop():
    """Live tensors do not grow from one step to the next."""
    model = nn.Linear(4, 2)
    opt = lt.optim.SGD(model.parameters(), lr=0.1)
    x = lt.randn(8, 4)
    counts = []
    for _ in range(4):
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        del loss
        gc.collect()
        counts.append(lt.live_tensors())
    assert counts[1] == counts[2] == counts[3]


def test_python_refcounts_return():
    x = lt.ones(3, requires_grad=True)
    start = sys.getrefcount(x)
    c_start = x._c_refcount()
    for _ in range(3):
        y = (x * 2 + 1).sum()
        y.backward()
        _ = x[0], x[1:], x.T, x.grad, repr(x), x.tolist(), x.detach(), x.numpy() if False else None
        with lt.no_grad():
            x.sub_(x.grad * 0.1)
        x.grad = None
    del y, _
    gc.collect()
    assert sys.getrefcount(x) == start
    assert x._c_refcount() == c_start == 1


def test_interop_objects_release_their_references():
    _settle()
    before = lt.live_tensors()
    x = lt.arange(6.0)
    c_start = x._c_refcount()
    a = x.numpy()
    t = torch.from_dlpack(x)
    m = memoryview(x)
    assert x._c_refcount() == c_start  # exports hold the storage through handles of their own
    del a, t, m
    y = lt.from_numpy(np.ones(4))
    z = lt.from_dlpack(torch.ones(3))
    del x, y, z
    _settle()
    assert lt.live_tensors() == before


def test_errors_leak_nothing():
    _settle()
    before = lt.live_tensors()
    x = lt.ones(2, 3)
    for bad in (lambda: x + lt.ones(4), lambda: x[5], lambda: x[lt.tensor([0, 9])],
                lambda: x.view(7), lambda: x.__setitem__((slice(None), lt.tensor([0])), lt.ones(5))):
        with pytest.raises((ValueError, IndexError, RuntimeError)):
            bad()
    del x
    _settle()
    assert lt.live_tensors() == before
