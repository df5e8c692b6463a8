"""Learning-rate schedules: the C library's pure functions of the step
(lt_lr_step_decay, lt_lr_cosine, lt_lr_warmup) driving an optimizer."""
from .. import _C


class _Schedule:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.last_epoch = 0
        self.optimizer.lr = self._lr(0)

    def step(self):
        self.last_epoch += 1
        self.optimizer.lr = self._lr(self.last_epoch)

    def get_last_lr(self):
        return [self.optimizer.lr]


class StepLR(_Schedule):
    def __init__(self, optimizer, step_size, gamma=0.1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def _lr(self, step):
        return _C.lr_step_decay(self.base_lr, step, self.step_size, self.gamma)


class CosineAnnealingLR(_Schedule):
    def __init__(self, optimizer, T_max, eta_min=0.0):  # noqa: N803 (torch's name)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer)

    def _lr(self, step):
        return _C.lr_cosine(self.base_lr, step, self.T_max, self.eta_min)


class LinearWarmup(_Schedule):
    """Linear warmup from 0 over warmup_steps, then `after`'s lr (another
    schedule's, or the base lr)."""

    def __init__(self, optimizer, warmup_steps, after=None):
        self.warmup_steps, self.after = warmup_steps, after
        super().__init__(optimizer)

    def _lr(self, step):
        after = self.base_lr if self.after is None else self.after._lr(step)
        return _C.lr_warmup(after, step, self.warmup_steps)
