"""Joining tensors: cat/concat/concatenate, stack, hstack/vstack/dstack, atleast_*d.

Note: cat and stack promote their inputs' dtypes as PyTorch does, skip legacy 1-d
empty tensors in cat, and give PyTorch's messages for mismatched shapes.
"""
import numpy as np

from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._registry import register
from .shape import SLICE, _replace_dim, _zeros, reshape, unbind, unsqueeze

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
           "atleast_1d", "atleast_2d", "atleast_3d"]

def _cat_dtype(arrays):
    from .. import _dtype as D
    return _promote_all([D._FROM_NP[a.dtype] for a in arrays]).np


def _promote_all(dtypes):
    """cat/stack's result dtype: every input counts, whatever its shape."""
    from .. import _dtype as D
    d = dtypes[0]
    for x in dtypes[1:]:
        d = D._PROMOTE[(d, x)]
    return d


def _cat_kernel(tensors, dim):
    npd = _cat_dtype(tensors)
    keep = [a for a in tensors if not (a.ndim == 1 and a.shape[0] == 0)]
    if not keep:
        return np.empty((0,), npd)
    return np.concatenate([a.astype(npd, copy=False) for a in keep], axis=dim)


def _cat_vjp(ctx, g):
    tensors, dim = ctx.args
    out, off = [], 0
    for shape, need in zip(ctx.shapes, ctx.needs_input_grad[0]):
        if shape == (0,):        # legacy: 1-d empty inputs are skipped by cat
            out.append(_zeros(shape, g.dtype) if need else None)
            continue
        n = shape[dim]
        out.append(dispatch(SLICE, (g, dim, off, off + n, 1)) if need else None)
        off += n
    return out, None


def _is_legacy_empty(t):
    return t.dim() == 1 and t.shape[0] == 0


def _cat_meta(tensors, dim):
    d = _cat_check(tensors, dim)
    dtype = _promote_all([t.dtype for t in tensors])
    keep = [t for t in tensors if not _is_legacy_empty(t)]
    if not keep:
        return (0,), dtype
    return _replace_dim(keep[0].shape, d, sum(t.shape[d] for t in keep)), dtype


CAT = register("cat", _cat_kernel, save=(1,), vjp=_cat_vjp, meta=_cat_meta, tags=("prim", "shape"),
               amp_policy="promote",
               schema="cat(Tensor[] tensors, int dim=0) -> Tensor")
CAT.meta_layout = "first"     # fake strides: np.concatenate keeps the inputs' axis order


def _cat_check(tensors, dim):
    """PyTorch's argument checks; returns the wrapped dim."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ref = None
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
        if ref is None and not (t._data.ndim == 1 and t._data.shape[0] == 0):
            ref = t
    if ref is None:
        return _wrap_dim(dim, 1, "cat")
    n = ref._data.ndim
    d = _wrap_dim(dim, n, "cat")
    for i, t in enumerate(tensors):
        if t._data.ndim == 1 and t._data.shape[0] == 0:
            continue
        if t._data.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{t._data.ndim}")
        for k in range(n):
            if k != d and t._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref._data.shape[k]} but got size {t._data.shape[k]} for tensor number "
                    f"{i} in the list.")
    return d


def cat(tensors, dim=0, *, out=None):
    d = _cat_check(tensors, dim)
    res = dispatch(CAT, (list(tensors), d))
    if out is None:
        return res
    from ._elementwise import write_out
    return write_out(out, res, "cat")


def _stack_kernel(tensors, dim):
    npd = _cat_dtype(tensors)
    return np.stack([a.astype(npd, copy=False) for a in tensors], axis=dim)


def _stack_meta(tensors, dim):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack(): argument 'tensors' must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    shape0 = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape0)} at entry 0 and {list(t.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape0) + 1, "stack")
    shape = list(shape0)
    shape.insert(d, len(tensors))
    return tuple(shape), _promote_all([t.dtype for t in tensors])


def _stack_decomp(tensors, dim=0):
    """unsqueeze each input at dim, then cat."""
    from .. import _prims as P
    d = dim % (tensors[0].dim() + 1)
    return P.cat([P.unsqueeze(t, d) for t in tensors], d)


STACK = register("stack", _stack_kernel, save=(1,), meta=_stack_meta, tags=("shape",),
                 decomp=_stack_decomp,
                 amp_policy="promote", vjp=lambda ctx, g: (list(unbind(g, ctx.args[1])), None),
                 schema="stack(Tensor[] tensors, int dim=0) -> Tensor")


def stack(tensors, dim=0, *, out=None):
    _stack_meta(tensors, dim)
    d = _wrap_dim(dim, tensors[0]._data.ndim + 1, "stack")
    res = dispatch(STACK, (list(tensors), d))
    if out is None:
        return res
    from ._elementwise import write_out
    return write_out(out, res, "stack")


def atleast_1d(*tensors):
    r = [reshape(t, (1,)) if t._data.ndim == 0 else t for t in _seq(tensors)]
    return r[0] if len(r) == 1 and isinstance(tensors[0], Tensor) else tuple(r)


def atleast_2d(*tensors):
    r = [t if t._data.ndim >= 2 else reshape(t, (1, -1) if t._data.ndim else (1, 1))
         for t in _seq(tensors)]
    return r[0] if len(r) == 1 and isinstance(tensors[0], Tensor) else tuple(r)


def atleast_3d(*tensors):
    def up(t):
        nd = t._data.ndim
        if nd == 0:
            return reshape(t, (1, 1, 1))
        if nd == 1:
            return reshape(t, (1, -1, 1))
        if nd == 2:
            return unsqueeze(t, -1)
        return t
    r = [up(t) for t in _seq(tensors)]
    return r[0] if len(r) == 1 and isinstance(tensors[0], Tensor) else tuple(r)


def _seq(tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def hstack(tensors, *, out=None):
    if not len(tensors):
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = [atleast_1d(t) for t in tensors]
    return cat(ts, 0 if ts and ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat([atleast_2d(t) for t in tensors], 0, out=out)


def dstack(tensors, *, out=None):
    return cat([atleast_3d(t) for t in tensors], 2, out=out)


concat = concatenate = cat
