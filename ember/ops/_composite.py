"""Ops defined by a decomposition: the kernel runs it on the arrays, the meta runs it on
meta tensors, and the vjp differentiates through it with the autograd engine.

Note: this is for composites that PyTorch also writes in ATen ops (most losses,
grid_sample) and that need a registry entry of their own (autocast policy, one event
in the profiler); gradients are exactly the composite's and double backward works.
"""
import numpy as np

from .._dispatch import STATE
from .._tensor import Tensor

__all__ = ["decomp_kernel", "decomp_meta", "decomp_vjp"]


def _as_tensor(a):
    if isinstance(a, np.ndarray):
        from .creation import from_numpy
        return from_numpy(a)
    return a


def decomp_kernel(decomp):
    def kernel(*arrays):
        return decomp(*[_as_tensor(a) for a in arrays])._data
    return kernel


def decomp_meta(decomp):
    def meta(*args):
        from ..autograd.grad_mode import no_grad
        with no_grad():
            out = decomp(*args)
        return tuple(out.shape), out.dtype
    return meta


def decomp_vjp(decomp):
    """The vjp of a composite: rebuild its graph on the saved inputs and run the engine
    on it (create_graph when the outer backward does, so higher orders work). Inputs
    enter through a view (or a detached copy), so their tensor hooks do not fire here.
    A decomposition returning several tensors (a fused backward op) gets one gradient per
    output; outputs without a gradient are left out."""
    def vjp(ctx, *gs):
        from ..autograd import grad as _grad
        from ..autograd.grad_mode import enable_grad
        args = list(ctx.args)
        need = ctx.needs_input_grad
        create = STATE.grad_enabled
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and need[i]]
        with enable_grad():
            for i in idx:
                a = args[i]
                args[i] = a.view_as(a) if create else a.detach().requires_grad_(True)
            outs = decomp(*args)
        if not isinstance(outs, (tuple, list)):
            outs = (outs,)
        pairs = [(o, g) for o, g in zip(outs, gs) if g is not None and o.requires_grad]
        res = [None] * len(args)
        if pairs:
            grads = _grad([o for o, _ in pairs], [args[i] for i in idx],
                          [g for _, g in pairs], create_graph=create, allow_unused=True)
            for i, gi in zip(idx, grads):
                res[i] = gi
        return tuple(res)
    return vjp
