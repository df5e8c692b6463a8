"""The losses, distances and products that reach Python through the C
library's op registry (src/nn/op_table.c): values, dtypes and gradients
against torch on cpu and lazy, torch's keyword names and defaults, and the
reduction strings."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import lazytensor as lt
import lazytensor.nn.functional as F
from conftest import assert_same, pair


def grads_match(leaves_lt, leaves_t, out_lt, out_t):
    w = np.linspace(-1.0, 1.5, max(out_t.numel(), 1)).astype(np.float32).reshape(tuple(out_t.shape))
    (out_lt * lt.tensor(w, device=out_lt.device)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    for x, t in zip(leaves_lt, leaves_t):
        assert_same(x.grad, t.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss,kw", [("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("huber_loss", {"delta": 0.7}), ("kl_div", {"log_target": True})])
def test_regression_losses(loss, kw, reduction, device, rng):
    x, tx = pair(rng.standard_normal((3, 4)).astype(np.float32), device, requires_grad=True)
    y, ty = pair(rng.standard_normal((3, 4)).astype(np.float32), device)
    got = getattr(F, loss)(x, y, reduction=reduction, **kw)
    want = getattr(TF, loss)(tx, ty, reduction=reduction, **kw)
    assert_same(got, want, rtol=1e-5, atol=1e-6)
    grads_match([x], [tx], got, want)


def test_binary_cross_entropy_weights_in_torch_order(device, rng):
    logits, tl = pair(rng.standard_normal((4, 3)).astype(np.float32), device, requires_grad=True)
    target, tt = pair((rng.random((4, 3)) > 0.5).astype(np.float32), device)
    pos, tp = pair(np.array([0.5, 2.0, 3.0], np.float32), device)
    got = F.binary_cross_entropy_with_logits(logits, target, None, "sum", pos)
    want = TF.binary_cross_entropy_with_logits(tl, tt, None, reduction="sum", pos_weight=tp)
    assert_same(got, want, rtol=1e-5)
    grads_match([logits], [tl], got, want)
    probs, tpr = pair(rng.uniform(0.05, 0.95, (4, 3)).astype(np.float32), device)
    assert_same(F.binary_cross_entropy(probs, target), TF.binary_cross_entropy(tpr, tt), rtol=1e-5)


def test_pair_losses_and_distances(device, rng):
    a, ta = pair(rng.standard_normal((5, 3)).astype(np.float32), device, requires_grad=True)
    b, tb = pair(rng.standard_normal((5, 3)).astype(np.float32), device, requires_grad=True)
    y, ty = pair(np.array([1, -1, 1, 1, -1], np.float32), device)
    got = F.cosine_embedding_loss(a, b, y, margin=0.2)
    want = TF.cosine_embedding_loss(ta, tb, ty, margin=0.2)
    assert_same(got, want, rtol=1e-5)
    grads_match([a, b], [ta, tb], got, want)
    assert_same(F.cosine_similarity(a, b), TF.cosine_similarity(ta, tb), rtol=1e-5)
    assert_same(F.pairwise_distance(a, b, p=3.0, keepdim=True), TF.pairwise_distance(ta, tb, p=3.0, keepdim=True),
                rtol=1e-5)
    assert_same(F.normalize(a, dim=0), TF.normalize(ta, dim=0), rtol=1e-5)
    s, ts = pair(rng.standard_normal(5).astype(np.float32), device)
    assert_same(F.margin_ranking_loss(s, s * 0.5, y, margin=0.1, reduction="none"),
                TF.margin_ranking_loss(ts, ts * 0.5, ty, margin=0.1, reduction="none"), rtol=1e-6)


def test_reduction_strings_are_checked(device, rng):
    x, _ = pair(rng.standard_normal(4).astype(np.float32), device)
    with pytest.raises(Exception, match="reduction 'avg' is not supported"):
        F.l1_loss(x, x, reduction="avg")
    with pytest.raises(Exception, match="batchmean"):
        F.huber_loss(x, x, reduction="batchmean")
    kl, tkl = pair(np.log(np.full((2, 3), 1 / 3, np.float32)), device)
    p, tp = pair(np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float32), device)
    assert_same(F.kl_div(kl, p, reduction="batchmean"), TF.kl_div(tkl, tp, reduction="batchmean"), rtol=1e-5)


def test_products(device, rng):
    m, tm = pair(rng.standard_normal((2, 3)).astype(np.float32), device, requires_grad=True)
    b1, tb1 = pair(rng.standard_normal((4, 2, 5)).astype(np.float32), device)
    b2, tb2 = pair(rng.standard_normal((4, 5, 3)).astype(np.float32), device)
    got = lt.baddbmm(m, b1, b2, beta=0.5, alpha=2.0)
    want = torch.baddbmm(tm, tb1, tb2, beta=0.5, alpha=2.0)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
    grads_match([m], [tm], got, want)
    assert_same(lt.addbmm(m, b1, b2, alpha=-1.0), torch.addbmm(tm, tb1, tb2, alpha=-1.0), rtol=1e-5, atol=1e-5)
    k, tk = pair(rng.standard_normal((3, 5)).astype(np.float32), device)
    bias, tbias = pair(np.full(5, np.nan, np.float32), device)  # beta 0 ignores the input, NaN included
    assert_same(lt.addmm(bias, m, k, beta=0.0), torch.addmm(tbias, tm, tk, beta=0.0), rtol=1e-5, atol=1e-5)
    v, tv = pair(np.arange(1, 4, dtype=np.int64), device)
    assert_same(lt.dot(v, v), torch.dot(tv, tv))
    assert_same(lt.vdot(v, v), torch.vdot(tv, tv))
    assert_same(lt.outer(v, v), torch.outer(tv, tv))
    assert_same(lt.kron(m, k), torch.kron(tm, tk), rtol=1e-6)
