"""The lazy device from Python: tracing, barriers, metrics, IR dumps, the
compiled backend and the C library's environment variables."""
import os
import subprocess
import sys

import numpy as np

import lazytensor as lt


def test_ops_trace_until_a_barrier():
    lt.metrics_reset()
    x = lt.tensor([[1.0, 2.0], [3.0, 4.0]], device="lazy")
    y = x * 2 + 1
    ir = lt.ir_text(y)
    assert ir.startswith("IR {") and "mul(" in ir and "add(" in ir and "ROOT=0" in ir
    assert "digraph" in lt.ir_dot(y)
    assert lt.metrics_counter("Barrier") == 0
    lt.mark_step()
    assert lt.metrics_counter("MarkStep") == 1
    assert "device_data" in lt.ir_text(y)  # computed: y is data now
    assert y.tolist() == [[3.0, 5.0], [7.0, 9.0]]
    assert "MarkStep" in lt.metrics_report()


def test_paper_figure_inplace_permute():
    """x.permute(1, 2, 0).add_(42) on a lazy tensor updates x itself."""
    x = lt.zeros(2, 3, 4, device="lazy")
    x.permute(1, 2, 0).add_(42)
    lt.sync()
    assert x.sum().item() == 42 * 24


def test_compiled_backend_matches_eager():
    """The cpu backend (fused C kernels) gives cpu's values from Python."""
    previous = lt.backend()
    lt.set_backend("cpu")
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((8, 16)).astype(np.float32)
        w = rng.standard_normal((16, 4)).astype(np.float32)
        outs = []
        for dev in ("cpu", "lazy"):
            x = lt.tensor(a, device=dev, requires_grad=True)
            y = ((x @ lt.tensor(w, device=dev)).relu() * 0.5 + 1).sum()
            y.backward()
            lt.mark_step()
            outs.append((y.item(), x.grad.to("cpu").tolist()))
        assert abs(outs[0][0] - outs[1][0]) < 1e-3
        assert np.allclose(outs[0][1], outs[1][1], atol=1e-5)
        assert lt.metrics_counter("Kernels") >= 1
    finally:
        lt.set_backend(previous)


def test_the_same_environment_variables():
    code = "import lazytensor as lt; print(lt.backend()); print(lt.get_num_threads())"
    env = dict(os.environ, LT_BACKEND="interp", LT_NUM_THREADS="3")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["interp", "3"]


def test_nothing_left_at_exit_with_lt_debug():
    """With LT_DEBUG=1 the C library reports tensors still referenced at
    exit: a script's tensors, model and optimizer are all released by then."""
    code = ("import lazytensor as lt\n"
            "m = lt.nn.Linear(3, 2, device='lazy'); o = lt.optim.Adam(m.parameters())\n"
            "x = lt.ones(4, 3, device='lazy'); (m(x) ** 2).mean().backward(); o.step(); lt.mark_step()\n"
            "keep = [x, m.weight, x.T, m.weight.grad]\n")
    env = dict(os.environ, LT_DEBUG="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "leak report" not in out.stderr, out.stderr
    # a Python object that is never freed keeps its C reference: reported
    leak = code + "import ctypes; ctypes.pythonapi.Py_IncRef(ctypes.py_object(x))\n"
    out = subprocess.run([sys.executable, "-c", leak], env=env, capture_output=True, text=True, check=True)
    assert "leak report at exit: 1 tensor alive" in out.stderr, out.stderr


def test_repr_matches_torch_formats():
    assert repr(lt.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(lt.tensor([1, 2], dtype=lt.int32)) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(lt.tensor([True])) == "tensor([True])"
    assert repr(lt.ones(2, device="lazy")) == "tensor([1., 1.], device='lazy:0')"
    assert repr(lt.ones(1, requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert repr(lt.device("lazy")) == "device(type='lazy', index=0)" and str(lt.device("cpu")) == "cpu"
    assert repr(lt.float32) == "lazytensor.float32"
