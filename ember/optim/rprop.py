"""Rprop (etas, step_sizes)."""
from ..ops.creation import full_like, zeros_like
from . import _functional as F
from .optimizer import (Optimizer, _check_lr, _check_no_fused, _run_closure, _scalar_state,
                        _to_scalar, _use_no_grad)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Resilient backpropagation (torch.optim.Rprop)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)
        _check_no_fused("Rprop", None, differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    def _init_group(self, group, params, grads, prevs, step_sizes, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                lr = _to_scalar(group["lr"])
                state["step"] = _scalar_state(0.0)
                state["prev"] = zeros_like(p)
                state["step_size"] = full_like(p.grad, complex(lr, lr) if p.is_complex()
                                               else lr)
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            state_steps.append(state["step"])

    @_use_no_grad
    def step(self, closure=None):
        """One Rprop step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, prevs, step_sizes, state_steps = [], [], [], [], []
            self._init_group(group, params, grads, prevs, step_sizes, state_steps)
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            F.rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                    step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
                    maximize=group["maximize"], capturable=group["capturable"])
        return loss
