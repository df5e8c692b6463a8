"""lazytensor.optim: the C library's optimizers (lt_optim_*) and schedules."""
from .. import _C
from . import lr_scheduler


class _ParamGroup(dict):
    """torch's param_groups entry: 'lr' reads and sets the C optimizer's."""

    def __init__(self, opt, **defaults):
        super().__init__(defaults)
        self._opt = opt

    def __getitem__(self, key):
        return self._opt.lr if key == "lr" else super().__getitem__(key)

    def __setitem__(self, key, value):
        if key == "lr":
            self._opt.lr = value
        else:
            super().__setitem__(key, value)


class Optimizer:
    def __init__(self, params, c_optimizer, **defaults):
        self._params = params  # the C optimizer retains them too
        self._c = c_optimizer
        self.param_groups = [_ParamGroup(self, params=params, **defaults)]

    def step(self):
        """One update from the parameters' gradients (in place, no grad)."""
        _C.optim_step(self._c)

    def zero_grad(self, set_to_none=True):
        _C.optim_zero_grad(self._c)

    @property
    def lr(self):
        return _C.optim_lr(self._c)

    @lr.setter
    def lr(self, value):
        _C.optim_set_lr(self._c, value)


def _params(params):
    params = list(params)
    if not params:
        raise ValueError("optimizer got an empty parameter list")
    return params


class SGD(Optimizer):
    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0, nesterov=False):
        params = _params(params)
        super().__init__(params, _C.optim_sgd(params, lr, momentum, weight_decay, nesterov), momentum=momentum,
                         weight_decay=weight_decay, nesterov=nesterov)


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        params = _params(params)
        c = _C.optim_adam(params, lr, betas[0], betas[1], eps, weight_decay, self._decoupled)
        super().__init__(params, c, betas=betas, eps=eps, weight_decay=weight_decay)


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr, betas, eps, weight_decay)


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
