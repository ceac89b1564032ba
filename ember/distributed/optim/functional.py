"""Functional optimizers for DistributedOptimizer: gradients come in as a list (from a
distributed autograd context), never through `.grad`, so trainers do not share state.

Note: each holds its own per-parameter state and a small lock around the update itself,
so concurrent trainers interleave whole updates (their forward/backward runs in parallel).
"""
import threading

from ...optim import _functional as F

__all__ = ["_FunctionalSGD", "_FunctionalAdam", "_FunctionalAdamW", "FUNCTIONAL"]


class _FunctionalOptimizer:
    def __init__(self, params):
        self.params = list(params)
        self.lock = threading.Lock()

    def _present(self, gradients):
        if len(gradients) != len(self.params):
            raise ValueError(f"the gradients passed in does not equal to the size of the "
                             f"parameters! Params length: {len(self.params)}. Gradients length: "
                             f"{len(gradients)}")
        return [i for i, g in enumerate(gradients) if g is not None]


class _FunctionalSGD(_FunctionalOptimizer):
    def __init__(self, params, lr=1e-2, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, maximize=False, foreach=False):
        super().__init__(params)
        self.kw = dict(lr=lr, momentum=momentum, dampening=dampening,
                       weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        self.momentum_buffers = [None] * len(self.params)

    def step(self, gradients):
        idx = self._present(gradients)
        with self.lock:
            bufs = [self.momentum_buffers[i] for i in idx]
            F.sgd([self.params[i] for i in idx], [gradients[i] for i in idx], bufs, **self.kw)
            for i, b in zip(idx, bufs):
                self.momentum_buffers[i] = b


class _FunctionalAdam(_FunctionalOptimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, maximize=False, foreach=False):
        super().__init__(params)
        import ember
        self.kw = dict(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps,
                       weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        self.state = [None] * len(self.params)
        self._zeros = ember.zeros_like
        self._step = lambda: ember.tensor(0.0)

    def step(self, gradients):
        idx = self._present(gradients)
        with self.lock:
            for i in idx:
                if self.state[i] is None:
                    p = self.params[i]
                    self.state[i] = (self._zeros(p), self._zeros(p), self._zeros(p),
                                     self._step())
            st = [self.state[i] for i in idx]
            F.adam([self.params[i] for i in idx], [gradients[i] for i in idx],
                   [s[0] for s in st], [s[1] for s in st], [s[2] for s in st],
                   [s[3] for s in st], decoupled_weight_decay=self.decoupled, **self.kw)


class _FunctionalAdamW(_FunctionalAdam):
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, maximize=False, foreach=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)


def _functional_map():
    from ... import optim
    return {optim.SGD: _FunctionalSGD, optim.Adam: _FunctionalAdam, optim.AdamW: _FunctionalAdamW}


FUNCTIONAL = _functional_map
