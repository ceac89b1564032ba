"""ASGD (averaged SGD)."""
from ..ops.creation import zeros_like
from . import _functional as F
from .optimizer import (Optimizer, _check_lr, _check_no_fused, _run_closure, _scalar_state,
                        _to_scalar, _use_no_grad)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (torch.optim.ASGD); the average is state 'ax'."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        _check_no_fused("ASGD", None, differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    @_use_no_grad
    def step(self, closure=None):
        """One ASGD step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (mus, axs, etas, state_steps) = self._gather(
                group, ("mu", "ax", "eta", "step"),
                lambda p: {"step": _scalar_state(0.0),
                           "eta": _scalar_state(_to_scalar(group["lr"])),
                           "mu": _scalar_state(1.0),
                           "ax": zeros_like(p)})
            F.asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"],
                   lr=group["lr"], t0=group["t0"], alpha=group["alpha"],
                   weight_decay=group["weight_decay"], maximize=group["maximize"],
                   capturable=group["capturable"])
        return loss
