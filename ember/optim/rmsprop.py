"""RMSprop (centered, momentum)."""
from ..ops.creation import zeros_like
from . import _functional as F
from .optimizer import (Optimizer, _check_lr, _check_no_fused, _run_closure, _scalar_state,
                        _use_no_grad)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_no_fused("RMSprop", None, differentiable)

    _group_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                       "differentiable": False, "capturable": False}

    def _init_group(self, group, params, grads, square_avgs, momentum_buffer_list, grad_avgs,
                    state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            params.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _scalar_state(0.0)
                state["square_avg"] = zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])

    @_use_no_grad
    def step(self, closure=None):
        """One RMSprop step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, square_avgs, momentum_buffer_list, grad_avgs, state_steps = (
                [] for _ in range(6))
            self._init_group(group, params, grads, square_avgs, momentum_buffer_list,
                             grad_avgs, state_steps)
            F.rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
                      lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                      weight_decay=group["weight_decay"], momentum=group["momentum"],
                      centered=group["centered"], maximize=group["maximize"],
                      capturable=group["capturable"])
        return loss
