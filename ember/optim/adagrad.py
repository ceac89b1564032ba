"""Adagrad (lr_decay, initial_accumulator_value)."""
from ..ops.creation import full_like
from . import _functional as F
from .optimizer import (Optimizer, _check_lr, _check_no_fused, _run_closure, _scalar_state,
                        _use_no_grad)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad); state is created eagerly in __init__, as in PyTorch."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_no_fused("Adagrad", fused, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p)

    def _init_state(self, p):
        state = self.state[p]
        v = self.defaults["initial_accumulator_value"]
        state["step"] = _scalar_state(0.0)
        state["sum"] = full_like(p, complex(v, v) if p.is_complex() else v)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "fused": None}

    def _init_group(self, group, params, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            if len(self.state[p]) == 0:
                self._init_state(p)
            state_sums.append(self.state[p]["sum"])
            state_steps.append(self.state[p]["step"])

    @_use_no_grad
    def step(self, closure=None):
        """One Adagrad step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, state_sums, state_steps = [], [], [], []
            self._init_group(group, params, grads, state_sums, state_steps)
            F.adagrad(params, grads, state_sums, state_steps, lr=group["lr"],
                      weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                      eps=group["eps"], maximize=group["maximize"])
        return loss
