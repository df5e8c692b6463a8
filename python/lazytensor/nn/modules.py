"""nn.Module and the C library's layers as modules.

A Module registers the Parameters and Modules set as its attributes (like
torch). The built-in layers are the C library's lt_module layers: their
parameters are the C module's own tensors, so the forward pass, the
initialization, the gradients and in-place moves are the C core's.
"""
from collections import OrderedDict

from .. import _C
from .._tensor import Tensor
from .._functions import no_grad
from . import functional as F


class Parameter(Tensor):
    """A tensor that a Module registers as a parameter (requires grad)."""

    __slots__ = ()

    def __new__(cls, data, requires_grad=True):
        p = _C._alias(cls, data)
        return p.requires_grad_() if requires_grad else p


class Module:
    """Base class of layers and models: subclasses set Parameters and
    Modules as attributes in __init__ and define forward()."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call super().__init__() before setting attributes of a Module")
        for registry in (self._parameters, self._modules, self._buffers):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in (self._parameters, self._modules, self._buffers):
            registry.pop(name, None)
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        setattr(self, name, param)

    def register_buffer(self, name, tensor):
        """State that is saved and moved with the module but not trained."""
        setattr(self, name, tensor)
        self._buffers[name] = tensor

    def add_module(self, name, module):
        setattr(self, name, module)

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- traversal ----------------------------------------------------------
    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_children(self):
        return iter(self._modules.items())

    def children(self):
        return iter(self._modules.values())

    def _named(self, registry, prefix, recurse):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mod_prefix, m in mods:
            for name, t in getattr(m, registry).items():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield (f"{mod_prefix}.{name}" if mod_prefix else name), t

    def named_parameters(self, prefix="", recurse=True):
        return self._named("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True):
        return self._named("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes, devices, gradients -----------------------------------------
    def train(self, mode=True):
        object.__setattr__(self, "training", mode)
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def _own_tensors(self):
        return list(self._parameters.values()) + list(self._buffers.values())

    def to(self, device=None, dtype=None):
        """Moves parameters and buffers in place (the tensor objects stay,
        so optimizers made before keep working), like torch."""
        if dtype is not None:
            raise TypeError("Module.to(dtype) is not supported: the C library moves tensors between "
                            "devices in place, not between dtypes")
        if device is not None:
            for m in self.modules():
                m._move_own(device)
        return self

    def _move_own(self, device):
        for t in self._own_tensors():
            if t is not None:
                t._move_(device)

    def cpu(self):
        return self.to("cpu")

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            p.grad = None

    # ---- state -----------------------------------------------------------------
    def state_dict(self, prefix=""):
        out = OrderedDict()
        for name, t in self.named_parameters(prefix):
            out[name] = t.detach()
        for name, t in self.named_buffers(prefix):
            out[name] = t.detach()
        return out

    def load_state_dict(self, state_dict, strict=True):
        own = OrderedDict(self.named_parameters())
        own.update(self.named_buffers())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        with no_grad():
            for name, t in own.items():
                if name in state_dict:
                    src = state_dict[name]
                    if tuple(src.shape) != tuple(t.shape):
                        raise ValueError(f"load_state_dict: {name} has shape {tuple(src.shape)}, the "
                                         f"module's has {tuple(t.shape)}")
                    t.copy_(src.to(t.device))
        return missing, unexpected

    def __repr__(self):
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        body = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({body})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def extra_repr(self):
        return ""


class _CLayer(Module):
    """A layer of the C library: forward, initialization, training mode and
    moves are the C module's. Its parameters and buffers are the C module's
    own tensors, registered under the same names."""

    def __init__(self, c_module):
        super().__init__()
        object.__setattr__(self, "_c", c_module)
        for name, t, is_param in c_module.state(Parameter, Tensor):
            if is_param:
                setattr(self, name, t)
            else:
                self.register_buffer(name, t)

    def forward(self, x):
        return _C.module_forward(self._c, x)

    def train(self, mode=True):
        _C.module_train(self._c, mode)
        return super().train(mode)

    def _move_own(self, device):
        _C.module_to(self._c, device)


class Linear(_CLayer):
    def __init__(self, in_features, out_features, bias=True, device=None):
        super().__init__(_C.nn_linear(in_features, out_features, bias, device))
        self._desc = f"in_features={in_features}, out_features={out_features}, bias={bias}"

    def extra_repr(self):
        return self._desc


class Conv2d(_CLayer):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, bias=True,
                 device=None):
        super().__init__(_C.nn_conv2d(in_channels, out_channels, kernel_size, stride, padding, groups, bias,
                                   device))


class LayerNorm(_CLayer):
    def __init__(self, normalized_shape, eps=1e-5, device=None):
        if not isinstance(normalized_shape, int):
            (normalized_shape,) = normalized_shape
        super().__init__(_C.nn_layer_norm(normalized_shape, eps, device))


class BatchNorm2d(_CLayer):
    def __init__(self, num_features, eps=1e-5, device=None):
        super().__init__(_C.nn_batch_norm2d(num_features, eps, device))


class Embedding(_CLayer):
    def __init__(self, num_embeddings, embedding_dim, device=None):
        super().__init__(_C.nn_embedding(num_embeddings, embedding_dim, device))


class SelfAttention(_CLayer):
    """Multi-head self-attention over [B, T, D] (the C library's layer)."""

    def __init__(self, dim, heads, causal=True, device=None):
        super().__init__(_C.nn_self_attention(dim, heads, causal, device))


class MaxPool2d(_CLayer):
    def __init__(self, kernel_size):
        super().__init__(_C.nn_max_pool2d(kernel_size))


class AvgPool2d(_CLayer):
    def __init__(self, kernel_size):
        super().__init__(_C.nn_avg_pool2d(kernel_size))


class Dropout(_CLayer):
    def __init__(self, p=0.5):
        super().__init__(_C.nn_dropout(p))


class Flatten(_CLayer):
    def __init__(self):
        super().__init__(_C.nn_flatten())


class ReLU(_CLayer):
    def __init__(self):
        super().__init__(_C.nn_relu())


class GELU(_CLayer):
    def __init__(self):
        super().__init__(_C.nn_gelu())


class SiLU(_CLayer):
    def __init__(self):
        super().__init__(_C.nn_silu())


class Tanh(_CLayer):
    def __init__(self):
        super().__init__(_C.nn_tanh())


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class CrossEntropyLoss(Module):
    def __init__(self, label_smoothing=0.0):
        super().__init__()
        self.label_smoothing = label_smoothing

    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, label_smoothing=self.label_smoothing)


class NLLLoss(Module):
    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target)


class MSELoss(Module):
    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target)
