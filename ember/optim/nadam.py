"""NAdam (momentum_decay, decoupled_weight_decay)."""
from ..ops.creation import zeros_like
from . import _functional as F
from .optimizer import (Optimizer, _check_betas, _check_lr, _check_no_fused, _run_closure,
                        _scalar_state, _use_no_grad)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (torch.optim.NAdam)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_no_fused("NAdam", None, differentiable)

    _group_defaults = {"maximize": False, "foreach": None, "capturable": False,
                       "differentiable": False, "decoupled_weight_decay": False}

    @_use_no_grad
    def step(self, closure=None):
        """One NAdam step; `closure` re-evaluates the loss (returned)."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, mu_products, state_steps) = self._gather(
                group, ("exp_avg", "exp_avg_sq", "mu_product", "step"),
                lambda p: {"step": _scalar_state(0.0),
                           "mu_product": _scalar_state(1.0),
                           "exp_avg": zeros_like(p),
                           "exp_avg_sq": zeros_like(p)})
            beta1, beta2 = group["betas"]
            F.nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                    beta1=beta1, beta2=beta2, lr=group["lr"],
                    weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                    eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                    maximize=group["maximize"], capturable=group["capturable"])
        return loss
