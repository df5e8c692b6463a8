"""examples/python/mlp.py gives the C trainer's losses: the same seed,
initialization, batch order and update (lazytensor-train --model mlp);
gpt.py trains and samples; and both scripts are no longer than the same
scripts written for PyTorch (examples/python/torch/), which run too."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("LT_BUILD_DIR", os.path.join(ROOT, "build"))
TRAINER = os.path.join(BUILD, "lazytensor-train")
DATA = "/usr/share/datasets/fashion-mnist"
STEPS = 20

pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(DATA, "train-images-idx3-ubyte.gz")),
                                reason="needs the Debian package dataset-fashion-mnist")


def python_losses(device, epochs=1, steps=STEPS):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "mlp.py"), "--device", device,
                          "--epochs", str(epochs), "--steps", str(steps), "--log-every", "1"],
                         capture_output=True, text=True, check=True).stdout
    return [float(v) for v in re.findall(r"^step \d+  loss (\S+)$", out, re.M)]


def trainer_losses(device, epochs=1, steps=STEPS):
    """Every step's loss, as lazytensor-train --print-losses prints it (9 decimals)."""
    out = subprocess.run([TRAINER, "--model", "mlp", "--device", device, "--epochs", str(epochs), "--steps",
                          str(steps), "--print-losses", "--quiet"], capture_output=True, text=True, check=True).stdout
    return [float(v) for v in re.findall(r"^epoch \d+ step \d+ loss (\S+)$", out, re.M)]


@pytest.mark.skipif(not os.path.exists(TRAINER), reason="the C trainer is not built")
@pytest.mark.parametrize("device", ["lazy", "cpu"])
def test_python_mlp_gives_the_c_trainers_losses(device):
    """Same seed, initialization, batch order (two epochs: two shuffles) and
    Adam update: every step's loss equal to 1e-6."""
    ours = python_losses(device, epochs=2, steps=6)
    theirs = trainer_losses(device, epochs=2, steps=6)
    assert len(ours) == len(theirs) == 12
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert abs(a - b) <= 1e-6, (step, a, b)
    assert ours[5] < ours[0] - 0.8  # it trains
    assert len(set(ours)) == 12


def test_python_mlp_same_losses_on_cpu_and_lazy():
    lazy, cpu = python_losses("lazy"), python_losses("cpu")
    assert len(cpu) == STEPS
    for a, b in zip(cpu, lazy):
        assert abs(a - b) <= 1e-4 * abs(a)


@pytest.mark.skipif(not os.path.exists(TRAINER), reason="the C trainer is not built")
def test_checkpoint_of_the_c_trainer_loads_in_python(tmp_path):
    """A model trained and saved by lazytensor-train (safetensors)
    loads into the Python MLP and gives the trainer's test accuracy."""
    import lazytensor as lt
    from lazytensor import nn
    path = tmp_path / "mlp.safetensors"
    out = subprocess.run([TRAINER, "--model", "mlp", "--device", "cpu", "--epochs", "1", "--steps", "5", "--save",
                          str(path)], capture_output=True, text=True, check=True).stdout
    accuracy = float(re.search(r"test accuracy ([0-9.]+)%", out).group(1))
    state = lt.load(path)
    assert state["optim.state.0.exp_avg"].shape == (512, 784)  # the optimizer state is saved too
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    model.load_state_dict({k[len("model."):]: v for k, v in state.items() if k.startswith("model.")})
    test = lt.data.fashion_mnist(DATA, train=False)
    with lt.no_grad():
        correct = sum((model(x).argmax(1) == y).sum().item() for x, y in test.batches(1000))
    assert abs(100 * correct / len(test) - accuracy) < 0.006


@pytest.mark.parametrize("device", ["cpu", "lazy"])
def test_python_gpt_trains_and_samples(device):
    """examples/python/gpt.py: a first loss near log(vocabulary), a falling
    loss, then the 64 prompt characters and 20 generated ones."""
    import math
    text = "/usr/share/common-licenses/GPL-3"
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "gpt.py"), "--device", device,
                          "--steps", "12", "--log-every", "1", "--sample", "20", "--text", text],
                         capture_output=True, text=True, check=True).stdout
    vocab = int(re.search(r"vocabulary (\d+)", out).group(1))
    losses = [float(v) for v in re.findall(r"^step \d+  loss (\S+)$", out, re.M)]
    assert len(losses) == 12 and abs(losses[0] - math.log(vocab)) < 0.5
    assert sum(losses[-3:]) < sum(losses[:3]) - 0.3
    sample = out.split("\n", 13)[13]
    with open(text, "rb") as f:
        prompt = f.read(64).decode()
    assert sample.startswith(prompt) and len(sample.rstrip("\n")) >= 64 + 20 - 5


def code_lines(path):
    """Lines of a script that hold code: not blank, not a comment, not in
    the docstring that opens the module (tools/shared_lines.py's rule)."""
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        from shared_lines import python_code_lines
    finally:
        sys.path.pop(0)
    with open(path, encoding="utf-8") as f:
        return python_code_lines(f.read())


@pytest.mark.parametrize("name", ["mlp.py", "gpt.py"])
def test_python_examples_are_no_longer_than_pytorchs(name):
    """examples/python/<name> against the same script written for PyTorch
    (examples/python/torch/<name>), which must run: lazytensor's script is
    no longer."""
    torch = pytest.importorskip("torch")
    ours = code_lines(os.path.join(ROOT, "examples", "python", name))
    theirs_path = os.path.join(ROOT, "examples", "python", "torch", name)
    theirs = code_lines(theirs_path)
    assert ours <= theirs, (name, ours, theirs)
    quick = ["--steps", "2", "--log-every", "1"] + (["--epochs", "1"] if name == "mlp.py" else ["--sample", "5"])
    out = subprocess.run([sys.executable, theirs_path] + quick, capture_output=True, text=True, check=True).stdout
    losses = [float(v) for v in re.findall(r"^step \d+  loss (\S+)$", out, re.M)]
    assert len(losses) == 2 and all(v == v and abs(v) < 1e3 for v in losses), (torch.__version__, out)
