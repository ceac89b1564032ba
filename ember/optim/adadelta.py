"""Adadelta."""
from ..ops.creation import zeros_like
from . import _functional as F
from .optimizer import (Optimizer, _check_lr, _check_no_fused, _run_closure, _scalar_state,
                        _use_no_grad)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_no_fused("Adadelta", None, differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    @_use_no_grad
    def step(self, closure=None):
        """One Adadelta step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (square_avgs, acc_deltas, state_steps) = self._gather(
                group, ("square_avg", "acc_delta", "step"),
                lambda p: {"step": _scalar_state(0.0),
                           "square_avg": zeros_like(p),
                           "acc_delta": zeros_like(p)})
            F.adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"],
                       rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                       maximize=group["maximize"], capturable=group["capturable"])
        return loss
