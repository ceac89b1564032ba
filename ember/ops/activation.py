"""softmax / log_softmax and clamp / clip.

Note: softmax and log_softmax keep fused, numerically stable kernels (subtract the
max, exponentiate once) with their own vjps, and also declare `decomp=` functions:
the same math in primitive ember ops (amax, sub, exp, sum, log, div), which is
what the compiler and export see. clamp is a ternary pointwise op whose bounds may
be numbers, tensors or None; its gradient follows PyTorch's clamp_backward(_min_max).
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import pointwise, inplace, write_out, type_name, DEFAULT
from ._registry import register, check_dtype_arg

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["softmax", "log_softmax", "clamp", "clip", "clamp_min", "clamp_max", "clamp_",
           "clip_", "clamp_min_", "clamp_max_"]


# ------------------------------------------------------------------- softmax

def _softmax_input(a, dtype, name, dim):
    """Cast to dtype= first (as PyTorch does), refuse non-float, widen half precision."""
    if dtype is not None:
        a = a.astype(dtype.np)
    if a.dtype.kind not in "f" and a.dtype != D.bfloat16.np:
        where = "lastdim_" if dim == a.ndim - 1 or a.ndim == 0 else ""
        raise NotImplementedError(f'"{name}_{where}kernel_impl" not implemented for '
                                  f"'{type_name(D.from_numpy_dtype(a.dtype))}'")
    comp = np.float32 if a.dtype.itemsize == 2 else a.dtype
    x = a.astype(comp, copy=False)
    return (x.reshape(1) if x.ndim == 0 else x), a.dtype


# what np.max / np.sum call on an ndarray, without their Python wrappers (~1 us each)
_max_reduce = np.maximum.reduce
_sum_reduce = np.add.reduce


def _shifted(x, dim):
    """x - max(x, dim): the stable exponent (an empty input has nothing to shift)."""
    if x.size == 0:
        return x
    return x - _max_reduce(x, axis=dim, keepdims=True)


def _softmax_kernel(a, dim, dtype):
    x, out = _softmax_input(a, dtype, "softmax", dim)
    if x.size == 0:
        return np.empty(a.shape, out)
    with np.errstate(all="ignore"):
        e = _shifted(x, dim)                             # a fresh array: updated in place
        np.exp(e, out=e)
        e /= _sum_reduce(e, axis=dim, keepdims=True)
    return e.reshape(a.shape).astype(out, copy=False)


def _log_softmax_kernel(a, dim, dtype):
    x, out = _softmax_input(a, dtype, "log_softmax", dim)
    if x.size == 0:
        return np.empty(a.shape, out)
    with np.errstate(all="ignore"):
        s = _shifted(x, dim)                             # a fresh array: updated in place
        s -= np.log(_sum_reduce(np.exp(s), axis=dim, keepdims=True))
    return s.reshape(a.shape).astype(out, copy=False)


def _softmax_vjp(ctx, g):
    _, dim, _ = ctx.args
    return (dispatch(SOFTMAX_BACKWARD, (g, ctx.out, dim)), None, None)


def _log_softmax_vjp(ctx, g):
    _, dim, _ = ctx.args
    return (dispatch(LOG_SOFTMAX_BACKWARD, (g, ctx.out, dim)), None, None)


# The backward formulas are ops of their own (as in PyTorch's _softmax_backward_data):
# one fused kernel instead of four dispatches, and still differentiable (double backward).

def _softmax_backward_kernel(g, y, dim):
    comp = np.float32 if g.dtype.itemsize == 2 else g.dtype
    gc, yc = g.astype(comp, copy=False), y.astype(comp, copy=False)
    t = np.asarray(gc * yc)                              # 0-d: an array, not a scalar
    t = np.subtract(gc, _sum_reduce(t, axis=dim, keepdims=True), out=t)
    return np.multiply(yc, t, out=t).astype(g.dtype, copy=False)


def _softmax_backward_decomp(g, y, dim):
    return y * (g - (g * y).sum(dim, keepdim=True))


def _softmax_backward_vjp(ctx, gg):
    g, y, dim = ctx.args
    s = (g * y).sum(dim, keepdim=True)
    ng, ny = ctx.needs_input_grad[:2]
    return (dispatch(SOFTMAX_BACKWARD, (gg, y, dim)) if ng else None,
            gg * (g - s) - g * (gg * y).sum(dim, keepdim=True) if ny else None, None)


def _log_softmax_backward_kernel(g, out, dim):
    comp = np.float32 if g.dtype.itemsize == 2 else g.dtype
    gc, oc = g.astype(comp, copy=False), out.astype(comp, copy=False)
    e = np.asarray(np.exp(oc))                           # 0-d: an array, not a scalar
    e *= _sum_reduce(gc, axis=dim, keepdims=True)
    return np.subtract(gc, e, out=e).astype(g.dtype, copy=False)


def _log_softmax_backward_decomp(g, out, dim):
    return g - out.exp() * g.sum(dim, keepdim=True)


def _log_softmax_backward_vjp(ctx, gg):
    g, out, dim = ctx.args
    e = out.exp()
    ng, no = ctx.needs_input_grad[:2]
    return (gg - (gg * e).sum(dim, keepdim=True) if ng else None,
            -gg * e * g.sum(dim, keepdim=True) if no else None, None)


def _backward_meta(g, y, dim):
    return tuple(g.shape), g.dtype


SOFTMAX_BACKWARD = register("_softmax_backward_data", _softmax_backward_kernel,
                            meta=_backward_meta, vjp=_softmax_backward_vjp,
                            decomp=_softmax_backward_decomp,
                            schema="_softmax_backward_data(Tensor grad_output, Tensor output, "
                                   "int dim) -> Tensor")
LOG_SOFTMAX_BACKWARD = register("_log_softmax_backward_data", _log_softmax_backward_kernel,
                                meta=_backward_meta, vjp=_log_softmax_backward_vjp,
                                decomp=_log_softmax_backward_decomp,
                                schema="_log_softmax_backward_data(Tensor grad_output, "
                                       "Tensor output, int dim) -> Tensor")


def _decomp_input(input, dtype):
    """(x in the compute dtype, result dtype) for the decompositions."""
    x = input if dtype is None else input.to(dtype)
    res = x.dtype
    return (x.float() if res in (D.float16, D.bfloat16) else x), res


def _softmax_decomp(input, dim, dtype):
    x, res = _decomp_input(input, dtype)
    if x.numel():
        x = x - x.amax(dim, keepdim=True)
    e = x.exp()
    return (e / e.sum(dim, keepdim=True)).to(res)


def _log_softmax_decomp(input, dim, dtype):
    x, res = _decomp_input(input, dtype)
    if x.numel():
        x = x - x.amax(dim, keepdim=True)
    return (x - x.exp().sum(dim, keepdim=True).log()).to(res)


def _softmax_meta(name):
    def meta(a, dim, dtype):
        check_dtype_arg(dtype, name)
        _softmax_input(np.empty((0,) * a.ndim, a._dtype.np), dtype, name, dim)
        return tuple(a.shape), dtype or a.dtype
    return meta


# Not on PyTorch's AutocastCPU fp32 list (only CUDA's): amp_policy stays "none".
SOFTMAX = register("softmax", _softmax_kernel, meta=_softmax_meta("softmax"),
                   vjp=_softmax_vjp, decomp=_softmax_decomp, save=(), save_out=True,
                   schema="softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")
LOG_SOFTMAX = register("log_softmax", _log_softmax_kernel, meta=_softmax_meta("log_softmax"),
                       vjp=_log_softmax_vjp, decomp=_log_softmax_decomp, save=(),
                       save_out=True,
                       schema="log_softmax.int(Tensor self, int dim, "
                              "ScalarType? dtype=None) -> Tensor")


def _get_softmax_dim(name, ndim, stacklevel):
    """nn.functional's legacy implicit dim (dim=None): 0 for 0-, 1- and 3-d input, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_call(op, input, dim, dtype, out):
    d = _wrap_dim(dim, input._data.ndim, op.name)
    res = dispatch(op, (input, d, dtype))
    return res if out is None else write_out(out, res, op.name)


def softmax(input, dim, dtype=None, *, out=None):
    return _softmax_call(SOFTMAX, input, dim, dtype, out)


def log_softmax(input, dim, dtype=None, *, out=None):
    return _softmax_call(LOG_SOFTMAX, input, dim, dtype, out)


# --------------------------------------------------------------------- clamp

def _clamp_kernel(a, lo, hi):
    # the input as NumPy's second operand: on a tie (0.0 vs -0.0) the input's sign is kept,
    # as PyTorch's clamp does
    if lo is not None:
        a = np.maximum(lo, a)
    if hi is not None:
        a = np.minimum(hi, a)
    return a


def _clamp_vjp(ctx, g):
    """PyTorch's clamp_backward / clamp_backward_min_max (bound ties pass to self)."""
    x, lo, hi = ctx.args
    nx, nlo, nhi = ctx.needs_input_grad
    if lo is not None and hi is not None:
        gx = g * ((x >= lo) & (x <= hi)) if nx else None
        glo = g * ((x < lo) & (lo < hi)) if nlo else None
        ghi = g * ((x > hi) | (hi < lo)) if nhi else None
    elif lo is not None:
        gx = g * (x >= lo) if nx else None
        glo = g * (x < lo) if nlo else None
        ghi = None
    else:
        gx = g * (x <= hi) if nx else None
        glo = None
        ghi = g * (x > hi) if nhi else None
    return gx, glo, ghi


def _clamp_decomp(x, lo=None, hi=None):
    """maximum with the lower bound, then minimum with the upper (NaN propagates)."""
    from .. import _prims as P
    if lo is not None:
        x = P.maximum(x, lo)
    if hi is not None:
        x = P.minimum(x, hi)
    return x


CLAMP = pointwise("clamp", _clamp_kernel, 3, DEFAULT, vjp=_clamp_vjp, allowed={0, 1, 2},
                  decomp=_clamp_decomp,
                  schema="clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor")


def _clamp_args(input, min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if b is not None]
    if len(bounds) == 2 and isinstance(min, Tensor) != isinstance(max, Tensor):
        kinds = ", ".join("Tensor" if isinstance(b, Tensor) else type(b).__name__
                          for b in (input, min, max))
        raise TypeError(f"clamp() received an invalid combination of arguments - got ({kinds}), "
                        "but expected min and max to be both Tensors or both Numbers")
    if isinstance(input, Tensor) and input._dtype._kind == 3:
        raise NotImplementedError("clamp is not supported for complex types")
    return (input, min, max)


def clamp(input, min=None, max=None, *, out=None):
    res = dispatch(CLAMP, _clamp_args(input, min, max))
    return res if out is None else write_out(out, res, "clamp")


def clamp_(input, min=None, max=None):
    return inplace(CLAMP, input, _clamp_args(input, min, max))


def clamp_min(input, min, *, out=None):
    return clamp(input, min, None, out=out)


def clamp_max(input, max, *, out=None):
    return clamp(input, None, max, out=out)


def clamp_min_(input, min):
    return clamp_(input, min, None)


def clamp_max_(input, max):
    return clamp_(input, None, max)


clip, clip_ = clamp, clamp_


def _make_methods():
    for name in __all__:
        METHODS[name] = globals()[name]


_make_methods()
