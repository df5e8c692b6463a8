"""Indexing and assignment against torch, on cpu and lazy: ints, slices
with steps, None, ..., bool masks, integer tensors and lists, and writes
through views reaching their base."""
import numpy as np
import pytest
import torch

import lazytensor as lt
from conftest import assert_same, pair


def idx_pair(spec, device):
    """An index spec with tensors given as ("i", list) or ("b", list)."""
    if isinstance(spec, tuple) and len(spec) == 2 and spec[0] in ("i", "b"):
        dt = (lt.int64, torch.int64) if spec[0] == "i" else (lt.bool, torch.bool)
        return lt.tensor(spec[1], dtype=dt[0], device=device), torch.tensor(spec[1], dtype=dt[1])
    if isinstance(spec, tuple):
        parts = [idx_pair(s, device) for s in spec]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    return spec, spec


MASK = [[True, False, True, False, True], [False, False, True, True, False],
        [True, True, False, False, False], [False, True, False, True, True]]
INDICES = [
    1, -1, (1, 2), (slice(None), 2), slice(1, 3), slice(None, None, 2), (slice(1, None, 2), slice(0, 5, 3)),
    slice(-2, None), slice(5, 2), None, (None, 1), Ellipsis, (Ellipsis, 0), (0, Ellipsis, None),
    (1, slice(None), None, slice(2, 4)), ("i", [0, 2]), ("i", [[1, 1], [3, 0]]), ("i", [-1, 0]),
    (slice(None), ("i", [4, 0, 1])), (("i", [0, 1]), slice(None), ("i", [2, 3])),
    (("i", [0, 2, 3]), ("i", [1, 4, 0])), (slice(None), ("i", [1, 2]), ("i", [0, 5])),
    ("b", [True, False, True, False]), ("b", MASK), (0, ("b", [True, False, True, True, False])),
    [0, 3], (slice(1, 3), [0, 2]),
]


@pytest.mark.parametrize("spec", INDICES, ids=repr)
def test_getitem_matches_torch(spec, device, rng):
    a = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x, t = pair(a, device)
    i, j = idx_pair(spec, device)
    assert_same(x[i], t[j])


@pytest.mark.parametrize("spec", INDICES, ids=repr)
def test_setitem_matches_torch(spec, device, rng):
    a = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x, t = pair(a, device)
    i, j = idx_pair(spec, device)
    shape = tuple(t[j].shape)
    v = rng.standard_normal(shape).astype(np.float32)
    x[i] = lt.tensor(v, device=device)
    t[j] = torch.tensor(v)
    assert_same(x, t)
    x[i] = 2.5  # a scalar broadcasts
    t[j] = 2.5
    assert_same(x, t)
    if len(shape) >= 1:  # a value broadcast along the leading dims
        row = rng.standard_normal(shape[-1:]).astype(np.float32)
        x[i] = lt.tensor(row, device=device)
        t[j] = torch.tensor(row)
        assert_same(x, t)


def test_mask_assignment_without_nonzero(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    x, t = pair(a, device)
    x[x < 0] = 0.0
    t[t < 0] = 0.0
    assert_same(x, t)
    x[x > 0.5] = lt.tensor(-1.0, device=device)
    t[t > 0.5] = torch.tensor(-1.0)
    assert_same(x, t)


def test_writes_through_views_reach_the_base(device):
    x = lt.zeros(3, 4, device=device)
    t = torch.zeros(3, 4)
    for f in (lambda v: v[1], lambda v: v[:, 1::2], lambda v: v.T[2], lambda v: v[None, 2, ..., 1:3]):
        f(x)[...] = 1.0
        f(t)[...] = 1.0
        f(x).add_(2)
        f(t).add_(2)
        f(x).mul_(3)
        f(t).mul_(3)
    assert_same(x, t)
    v = x[1:, 2:]
    v[0, 0] = 42.0
    t[1:, 2:][0, 0] = 42.0
    assert_same(x, t)
    x.view(-1)[5] = -7.0
    t.view(-1)[5] = -7.0
    assert_same(x, t)


def test_basic_index_results_are_views():
    x = lt.arange(24.0).view(2, 3, 4)
    for v in (x[1], x[:, 1:3], x[..., ::2], x[None, 0], x[0, :, 1]):
        assert v.shares_storage(x)
    assert not x[lt.tensor([0, 1])].shares_storage(x)  # advanced indexing copies, like torch


def test_index_gradients(device, rng):
    a = rng.standard_normal((4, 5)).astype(np.float32)
    x, t = pair(a, device, requires_grad=True)
    out = x[1:3, ::2].sum() + (x[lt.tensor([0, 0, 3], device=device)] * 2).sum() + x[-1, 2]
    want = t[1:3, ::2].sum() + (t[torch.tensor([0, 0, 3])] * 2).sum() + t[-1, 2]
    assert_same(out, want)
    out.backward()
    want.backward()
    assert_same(x.grad, t.grad)


def test_index_errors(device):
    x = lt.zeros(2, 3, device=device)
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x[..., ...]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError):
        x[lt.tensor([0.5])]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(IndexError):
        x[lt.tensor([0, 5]), lt.tensor([0, 1])]
    with pytest.raises(IndexError, match="shape of the mask"):
        x[lt.tensor([[True]], device=device)]
    with pytest.raises(TypeError):
        del x[0]
    with pytest.raises(TypeError):
        len(lt.tensor(1.0))
    assert len(x) == 2 and [r.shape for r in x] == [(3,), (3,)]
