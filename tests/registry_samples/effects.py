"""Samples for the effect ops (ember/ops/effects.py): each is reached through the public
path that dispatches it while a mode is active (the registry tests run samples under one)."""
import ember

from ._util import X, t

NON_DIFFERENTIABLE = {"accumulate_grad_", "detach", "set_", "resize_", "lift_fresh_copy",
                      "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"}


def _backward_grad(x):
    (x * 2).sum().backward()
    return x.grad


def _out_resized(x):
    out = ember.empty(0, dtype=x.dtype)
    return ember.add(x.detach(), 1, out=out)


def _unscale(x):
    found = ember.zeros((), dtype=ember.float32)
    g = x.detach().clone()
    ember._amp_foreach_non_finite_check_and_unscale_([g], found,
                                                     ember.full((), 0.5, dtype=x.dtype))
    return g, found


def _update_scale(x):
    scale = ember.full((), 4.0, dtype=ember.float32)
    tracker = ember.zeros((), dtype=ember.int32)
    return ember._amp_update_scale_(scale, tracker, ember.zeros(()), 2.0, 0.5, 1), tracker


SAMPLES = {
    "accumulate_grad_": lambda: (_backward_grad, [X()]),
    "detach": lambda: (lambda x: x.detach(), [X()]),
    "set_": lambda: (lambda x: x.detach().t_(), [X()]),
    "resize_": lambda: (_out_resized, [X()]),
    "lift_fresh_copy": lambda: (lambda x: ember.tensor([[1.0, 2.0]]) + x, [t(1, 2)]),
    "_amp_foreach_non_finite_check_and_unscale_": lambda: (_unscale, [X()]),
    "_amp_update_scale_": lambda: (_update_scale, [X()]),
}
