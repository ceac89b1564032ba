"""Registry ops for effects that are not array math: `.grad` accumulation, in-place
geometry changes, out= resizing, tensor constants and GradScaler's inf check / scale update.

Note: a recording mode sees a program only through registry ops (DESIGN §6), so every
effect a training step has on tensors must be one. These ops' kernels act on Tensors
(they set `.grad`, rebind a view, resize storage), so they run the same on real and
fake tensors; callers dispatch them when a mode is active and keep their direct fast
path otherwise. The amp ops follow PyTorch's `_amp_foreach_non_finite_check_and_unscale_`
and `_amp_update_scale_` kernels.
"""
import numpy as np

from .. import _dtype as D
from .._memory import resize_storage
from ._registry import OpDef, REGISTRY


class EffectOp(OpDef):
    """An op whose kernel takes and returns Tensors (the effect is on tensor state)."""

    def __init__(self, name, fn, **kw):
        super().__init__(name, fn, **kw)      # kernels['cpu'] is fn: it takes Tensors
        self.fn = fn
        if name in REGISTRY:
            raise RuntimeError(f"op '{name}' registered twice")
        REGISTRY[name] = self

    def _execute(self, args):
        return self.fn(*args)

    def run_kernel(self, args):
        return self.fn(*args)


# ------------------------------------------------------------------ .grad

def _accumulate_grad(variable, new_grad, how):
    """AccumulateGrad's write, decided by the engine: 'steal' (the gradient becomes .grad),
    'copy' (a fresh copy laid out like the leaf), 'clone' (create_graph), 'add' (a new
    .grad = old + new, keeping history) or 'add_' (in place). Returns the new .grad."""
    from ..autograd.engine import _copy_like
    if how == "steal":
        variable.grad = new_grad.detach()
    elif how == "copy":
        variable.grad = _copy_like(new_grad, variable)
    elif how == "clone":
        variable.grad = new_grad.clone()
    elif how == "add":
        variable.grad = variable.grad + new_grad
    elif how == "add_":
        variable.grad.add_(new_grad)
    else:
        raise ValueError(f"accumulate_grad_: unknown mode {how!r}")
    return variable.grad


ACCUMULATE_GRAD_ = EffectOp("accumulate_grad_", _accumulate_grad, tags=("prim", "inplace"),
                            meta=lambda variable, new_grad, how: (variable.shape,
                                                                  variable.dtype),
                            schema="accumulate_grad_(Tensor(a!) variable, Tensor new_grad, "
                                   "str how) -> Tensor")


# ------------------------------------------------------------------ geometry / storage

DETACH = EffectOp("detach", lambda t: t._detach(), view=True,
                  meta=lambda t: (tuple(t.shape), t.dtype),
                  schema="detach(Tensor(a) self) -> Tensor(a)", tags=("prim",))
DETACH.__doc__ = "Tensor.detach() under a mode: an alias with no history, made by an op."


def _set(self, source):
    """self takes source's geometry over source's storage (x.t_() is x.set_(x.t()))."""
    self._data = source._data
    self._storage = source._storage
    self._mstrides, self._moffset = source._mstrides, source._moffset   # meta geometry
    self._sym_shape = source._sym_shape
    return self


SET_ = EffectOp("set_", _set, tags=("prim", "inplace"), view=True,
               meta=lambda self, source: (tuple(source.shape), source.dtype),
                schema="set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)")


def _resize(self, size):
    """out= resizing: a fresh buffer of `size` (contents undefined, as in PyTorch)."""
    size = tuple(size)
    if self._data.shape == size:
        return self
    if self._base is not None:
        raise RuntimeError("resize_(): cannot resize an out= tensor that is a view")
    if self._backend == "cpu":
        self._data = np.empty(size, self._dtype.np)
        resize_storage(self._storage, self._data.nbytes)
    else:
        self._data = np.broadcast_to(np.zeros((), self._dtype.np), size)
    self._storage.version += 1
    return self


RESIZE_ = EffectOp("resize_", _resize, tags=("prim", "inplace"),
                  meta=lambda self, size: (tuple(size), self.dtype),
                   schema="resize_(Tensor(a!) self, SymInt[] size) -> Tensor(a!)")


# ------------------------------------------------------------------ constants

def _lift_meta(value):
    return value.shape, D._FROM_NP[value.dtype]


LIFT_FRESH_COPY = OpDef("lift_fresh_copy", lambda value: np.array(value, copy=True),
                        meta=_lift_meta, tags=("prim", "factory"),
                        schema="lift_fresh_copy(Any value) -> Tensor")
REGISTRY["lift_fresh_copy"] = LIFT_FRESH_COPY
LIFT_FRESH_COPY.__doc__ = """ember.tensor(data) under a mode: the constant's value is an
argument of the call, so a recording holds it and a replay rebuilds it."""


# ------------------------------------------------------------------ GradScaler

def _non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """For each grad: found_inf = 1 if it has an inf/nan; grad *= inv_scale (in place)."""
    for g in grads:
        if g._backend == "cpu" and not np.isfinite(g._data).all():
            found_inf._data[...] = 1.0
        g.mul_(inv_scale)
    found_inf._storage.version += 1
    return ()       # PyTorch's op returns nothing


AMP_UNSCALE_ = EffectOp("_amp_foreach_non_finite_check_and_unscale_",
                        _non_finite_check_and_unscale, tags=("prim", "inplace"),
                        meta=lambda grads, found_inf, inv_scale: (),
                        schema="_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, "
                               "Tensor(b!) found_inf, Tensor inv_scale) -> ()")


def _update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                  growth_interval):
    """PyTorch's _amp_update_scale_: back off on inf, grow after growth_interval clean
    steps (keeping the scale if growth overflows); scale and tracker change in place."""
    if scale._backend == "cpu":
        s = scale._data
        tr = growth_tracker._data
        if found_inf._data.reshape(()) != 0:
            s[...] = np.float32(float(s.reshape(())) * backoff_factor)
            tr[...] = 0
        else:
            successful = int(tr.reshape(())) + 1
            if successful == growth_interval:
                grown = np.float32(float(s.reshape(())) * growth_factor)
                if np.isfinite(grown):
                    s[...] = grown
                tr[...] = 0
            else:
                tr[...] = successful
    scale._storage.version += 1
    growth_tracker._storage.version += 1
    return scale


AMP_UPDATE_SCALE_ = EffectOp("_amp_update_scale_", _update_scale, tags=("prim", "inplace"),
                             meta=lambda scale, *rest: (tuple(scale.shape), scale.dtype),
                             schema="_amp_update_scale_(Tensor(a!) self, "
                                    "Tensor(b!) growth_tracker, Tensor found_inf, "
                                    "float scale_growth_factor, float scale_backoff_factor, "
                                    "int growth_interval) -> Tensor(a!)")


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """torch._amp_foreach_non_finite_check_and_unscale_: unscale grads in place, flag infs."""
    from .._dispatch import dispatch
    dispatch(AMP_UNSCALE_, (list(self), found_inf, inv_scale))


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor,
                       scale_backoff_factor, growth_interval):
    """torch._amp_update_scale_: GradScaler's scale update, in place; returns self."""
    from .._dispatch import dispatch
    return dispatch(AMP_UPDATE_SCALE_, (self, growth_tracker, found_inf, scale_growth_factor,
                                        scale_backoff_factor, growth_interval))


def lift_fresh_copy(value):
    """A tensor constant through the registry (for ember.tensor under a mode)."""
    from .._dispatch import dispatch
    return dispatch(LIFT_FRESH_COPY, (value,))


