"""nn and optim against torch: the C layers with torch's weights give
torch's outputs and gradients; the C optimizers and schedules follow
torch's; Module registration, state dicts, moves and checkpoints."""
import numpy as np
import pytest
import torch

import lazytensor as lt
from lazytensor import nn
from conftest import assert_same, pair


def copy_into_torch(lt_module, torch_module):
    """torch_module's parameters get lt_module's values, by name."""
    ours = dict(lt_module.named_parameters())
    with torch.no_grad():
        for name, p in torch_module.named_parameters():
            p.copy_(torch.tensor(np.array(ours[name].to("cpu").tolist(), dtype=np.float32)))


LAYERS = [
    (lambda d: nn.Linear(5, 3, device=d), lambda: torch.nn.Linear(5, 3), (4, 5)),
    (lambda d: nn.Linear(5, 3, bias=False, device=d), lambda: torch.nn.Linear(5, 3, bias=False), (2, 5)),
    (lambda d: nn.Conv2d(2, 3, 3, padding=1, device=d), lambda: torch.nn.Conv2d(2, 3, 3, padding=1), (2, 2, 5, 5)),
    (lambda d: nn.Conv2d(2, 4, 3, stride=2, groups=2, device=d),
     lambda: torch.nn.Conv2d(2, 4, 3, stride=2, groups=2), (1, 2, 7, 7)),
    (lambda d: nn.LayerNorm(6, device=d), lambda: torch.nn.LayerNorm(6), (3, 6)),
    (lambda d: nn.MaxPool2d(2), lambda: torch.nn.MaxPool2d(2), (1, 2, 4, 4)),
    (lambda d: nn.AvgPool2d(2), lambda: torch.nn.AvgPool2d(2), (1, 2, 4, 4)),
    (lambda d: nn.Flatten(), lambda: torch.nn.Flatten(), (2, 3, 4)),
    (lambda d: nn.ReLU(), lambda: torch.nn.ReLU(), (3, 4)),
    (lambda d: nn.GELU(), lambda: torch.nn.GELU(), (3, 4)),
    (lambda d: nn.SiLU(), lambda: torch.nn.SiLU(), (3, 4)),
    (lambda d: nn.Tanh(), lambda: torch.nn.Tanh(), (3, 4)),
]


@pytest.mark.parametrize("make,make_torch,shape", LAYERS, ids=lambda v: str(v) if isinstance(v, tuple) else "")
def test_layers_match_torch(make, make_torch, shape, device, rng):
    m, tm = make(device), make_torch()
    copy_into_torch(m, tm)
    x, t = pair(rng.standard_normal(shape).astype(np.float32), device, requires_grad=True)
    out, want = m(x), tm(t)
    assert_same(out, want, rtol=1e-4, atol=1e-5)
    w = rng.standard_normal(tuple(want.shape)).astype(np.float32)
    (out * lt.tensor(w, device=device)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    assert_same(x.grad, t.grad, rtol=1e-4, atol=1e-4)
    theirs = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert_same(p.grad, theirs[name].grad, rtol=1e-4, atol=1e-4)


def test_embedding_and_losses(device, rng):
    emb = nn.Embedding(10, 4, device=device)
    temb = torch.nn.Embedding(10, 4)
    copy_into_torch(emb, temb)
    idx, tidx = pair(np.array([[1, 3], [9, 0]]), device)
    assert_same(emb(idx), temb(tidx))
    logits, tl = pair(rng.standard_normal((5, 4)).astype(np.float32), device, requires_grad=True)
    y, ty = pair(np.array([0, 3, 1, 1, 2]), device)
    for ours, theirs in [
        (nn.CrossEntropyLoss()(logits, y), torch.nn.CrossEntropyLoss()(tl, ty)),
        (nn.CrossEntropyLoss(label_smoothing=0.1)(logits, y), torch.nn.CrossEntropyLoss(label_smoothing=0.1)(tl, ty)),
        (nn.NLLLoss()(logits.log_softmax(1), y), torch.nn.NLLLoss()(tl.log_softmax(1), ty)),
        (nn.MSELoss()(logits, logits * 0.5), torch.nn.MSELoss()(tl, tl * 0.5)),
    ]:
        assert_same(ours, theirs, rtol=1e-5, atol=1e-6)
        logits.grad = None
        tl.grad = None
        ours.backward()
        theirs.backward()
        assert_same(logits.grad, tl.grad, rtol=1e-4, atol=1e-6)
    assert_same(nn.functional.one_hot(y, 4), torch.nn.functional.one_hot(ty, 4))
    xs, ts = pair(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), device)
    ws, tw = pair(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), device)
    assert_same(nn.functional.conv2d(xs, ws, padding=1), torch.nn.functional.conv2d(ts, tw, padding=1), rtol=1e-4,
                atol=1e-5)
    assert_same(nn.functional.max_pool2d(xs, 2), torch.nn.functional.max_pool2d(ts, 2))
    xl, tx = pair(rng.standard_normal((4, 5)).astype(np.float32), device)
    wl, twl = pair(rng.standard_normal((3, 5)).astype(np.float32), device)
    bl, tbl = pair(rng.standard_normal((3,)).astype(np.float32), device)
    assert_same(nn.functional.linear(xl, wl, bl), torch.nn.functional.linear(tx, twl, tbl), rtol=1e-5, atol=1e-5)


class TwoLayer(nn.Module):
    def __init__(self, device=None):
        super().__init__()
        self.fc1 = nn.Linear(6, 8, device=device)
        self.fc2 = nn.Linear(8, 3, device=device)
        self.scale = nn.Parameter(lt.ones(3, device=device))
        self.register_buffer("offset", lt.zeros(3, device=device))
        self.not_registered = lt.ones(2)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu()) * self.scale + self.offset


class TorchTwoLayer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        self.fc2 = torch.nn.Linear(8, 3)
        self.scale = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return self.fc2(self.fc1(x).relu()) * self.scale


def test_module_registration():
    m = TwoLayer()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_buffers()] == ["offset"]
    assert list(m.state_dict()) == names + ["offset"]
    assert all(p.requires_grad for p in m.parameters())
    assert isinstance(m.fc1.weight, nn.Parameter) and m.fc1.weight.shape == (8, 6)
    assert [type(c).__name__ for c in m.children()] == ["Linear", "Linear"]
    m.eval()
    assert not m.training and not m.fc1.training
    assert "Linear(in_features=6, out_features=8, bias=True)" in repr(m)


OPTIMIZERS = [
    (lambda p: lt.optim.SGD(p, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    (lambda p: lt.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
     lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    (lambda p: lt.optim.Adam(p, lr=0.01, weight_decay=0.01), lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.01)),
    (lambda p: lt.optim.AdamW(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01)),
]


@pytest.mark.parametrize("make,make_torch", OPTIMIZERS)
def test_optimizers_follow_torch(make, make_torch, device, rng):
    m, tm = TwoLayer(device), TorchTwoLayer()
    copy_into_torch(m, tm)
    opt, topt = make(list(m.parameters())), make_torch(tm.parameters())
    x, t = pair(rng.standard_normal((10, 6)).astype(np.float32), device)
    y, ty = pair(rng.integers(0, 3, 10), device)
    for _ in range(4):
        loss = nn.functional.cross_entropy(m(x), y)
        tloss = torch.nn.functional.cross_entropy(tm(t), ty)
        assert abs(loss.item() - tloss.item()) < 1e-5
        loss.backward()
        tloss.backward()
        opt.step()
        topt.step()
        opt.zero_grad()
        topt.zero_grad()
        lt.mark_step()
    theirs = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        assert_same(p, theirs[name], rtol=1e-4, atol=1e-5)


def test_lr_schedules_follow_torch():
    p = [nn.Parameter(lt.ones(1))]
    tp = [torch.nn.Parameter(torch.ones(1))]
    for make, make_torch in [
        (lambda o: lt.optim.lr_scheduler.StepLR(o, 2, 0.5), lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5)),
        (lambda o: lt.optim.lr_scheduler.CosineAnnealingLR(o, 5, 0.01),
         lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 5, 0.01)),
    ]:
        opt, topt = lt.optim.SGD(p, lr=0.1), torch.optim.SGD(tp, lr=0.1)
        s, ts = make(opt), make_torch(topt)
        for _ in range(6):
            assert abs(opt.param_groups[0]["lr"] - topt.param_groups[0]["lr"]) < 1e-12
            topt.step()
            s.step()
            ts.step()
    opt = lt.optim.SGD(p, lr=0.1)
    w = lt.optim.lr_scheduler.LinearWarmup(opt, 4)
    lrs = [opt.lr] + [(w.step(), opt.lr)[1] for _ in range(5)]
    assert np.allclose(lrs, [0.025, 0.05, 0.075, 0.1, 0.1, 0.1])  # lt_lr_warmup: (step + 1) / warmup
    opt.param_groups[0]["lr"] = 0.5
    assert opt.lr == 0.5


def test_state_dict_round_trip_and_checkpoint_files(tmp_path, rng):
    m = TwoLayer()
    x = lt.tensor(rng.standard_normal((2, 6)).astype(np.float32))
    want = m(x).tolist()
    sd = m.state_dict()
    path = tmp_path / "model.safetensors"
    lt.save(sd, path)
    m2 = TwoLayer()
    m2.load_state_dict(lt.load(path))
    assert m2(x).tolist() == want
    with pytest.raises(KeyError):
        m2.load_state_dict({"scale": lt.ones(3)})
    loaded = lt.load(path, device="lazy")
    assert loaded["fc1.weight"].device == lt.device("lazy")
    # the C library's checkpoints are readable too: the same format
    assert set(loaded) == set(sd)


def test_module_to_moves_in_place_and_keeps_optimizer(rng):
    m = TwoLayer()
    params = list(m.parameters())
    opt = lt.optim.SGD(params, lr=0.1)
    m.to("lazy")
    assert all(p.device == lt.device("lazy") for p in m.parameters())
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert m.offset.device == lt.device("lazy")
    x = lt.tensor(rng.standard_normal((4, 6)).astype(np.float32), device="lazy")
    before = m.fc1.weight.to("cpu").tolist()
    (m(x) ** 2).mean().backward()
    opt.step()
    lt.mark_step()
    assert m.fc1.weight.to("cpu").tolist() != before
    m.to("cpu")
    assert m.fc2.bias.device == lt.device("cpu")


def test_dropout_train_and_eval():
    d = nn.Dropout(0.5)
    x = lt.ones(1000)
    y = d(x)
    kept = (y != 0).sum().item()
    assert 350 < kept < 650 and abs(y.max().item() - 2.0) < 1e-6
    d.eval()
    assert d(x).tolist() == x.tolist()
