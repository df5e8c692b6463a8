"""C errors become Python exceptions carrying the C message, by status;
mistakes never crash the interpreter and leave no error behind."""
import pytest

import lazytensor as lt


def test_shape_mismatch_is_value_error_with_c_message(device):
    with pytest.raises(ValueError, match=r"add: shapes \[2, 3\] and \[4\] are not broadcastable"):
        lt.ones(2, 3, device=device) + lt.ones(4, device=device)
    with pytest.raises(ValueError, match="matmul"):
        lt.ones(2, 3, device=device) @ lt.ones(2, 3, device=device)
    with pytest.raises(ValueError):
        lt.ones(6, device=device).view(4, -1)


def test_dtype_errors_are_type_errors(device):
    with pytest.raises(TypeError):
        lt.ones(3, dtype=lt.int64, device=device).mean()
    with pytest.raises(TypeError, match="bool tensors only"):
        lt.ones(3, dtype=lt.int64, device=device) & lt.ones(3, dtype=lt.int64, device=device)
    with pytest.raises(TypeError):
        lt.zeros(2, dtype="float128")


def test_index_errors_are_index_errors(device):
    x = lt.ones(3, device=device)
    with pytest.raises(IndexError):
        x.select(0, 5)
    with pytest.raises(IndexError):
        x.size(3)
    with pytest.raises(IndexError):
        x.sum(dim=4)


def test_device_and_state_errors_are_runtime_errors():
    with pytest.raises(RuntimeError, match="device"):
        lt.ones(2) + lt.ones(2, device="lazy")
    with pytest.raises((RuntimeError, ValueError)):
        lt.device("gpu")
    w = lt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        w += 1  # in-place on a leaf that requires grad, with grad mode on
    y = (w * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()  # the tape is released after the first backward


def test_bad_arguments_are_python_errors():
    with pytest.raises(TypeError):
        lt.ones(2) + "a"
    with pytest.raises(TypeError):
        lt.ones("a")
    with pytest.raises(ValueError, match="regular shape"):
        lt.tensor([[1, 2], "ab"])
    with pytest.raises(TypeError, match="expected a number"):
        lt.tensor([1, "a"])
    with pytest.raises(ValueError):
        lt.tensor([[1, 2], [3]])
    with pytest.raises(ValueError):
        lt.zeros(*([1] * 9))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(lt.ones(2))
    with pytest.raises(TypeError):
        lt.Tensor()
    with pytest.raises(TypeError):
        lt.ones(2).grad = lt.ones(2)
    with pytest.raises(TypeError):
        lt.cat([lt.ones(2), 3])
    with pytest.raises(TypeError, match="floor division"):
        lt.ones(2) // 2
    with pytest.raises(OSError):
        lt.load("/nonexistent/file.safetensors")


def test_absurd_sizes_are_memory_or_value_errors():
    with pytest.raises((MemoryError, ValueError)):
        lt.empty(1 << 40, 1 << 30)
    with pytest.raises(ValueError):
        lt.zeros(-1)


def test_errors_do_not_stick():
    """After an exception the next call works (the C error was cleared)."""
    with pytest.raises(ValueError):
        lt.ones(2) + lt.ones(3)
    assert (lt.ones(2) + lt.ones(2)).tolist() == [2.0, 2.0]
