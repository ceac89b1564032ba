"""Reductions: sum, mean, ... over dims, with PyTorch's dtype rules and keepdim.

Note: integer and bool inputs to sum/prod accumulate in int64 (PyTorch's
BOOL_TO_LONG / integral promotion); half precision accumulates in float32.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import write_out
from ._registry import register

__all__ = []


def _export(*fns):
    for f in fns:
        globals()[f.__name__] = f
        __all__.append(f.__name__)


def reduce_dims(dim, ndim, opname):
    """Normalize a dim argument to a sorted tuple of non-negative axes (None = all)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(_wrap_dim(d, ndim, opname) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return tuple(sorted(dims))
    return (_wrap_dim(dim, ndim, opname),)


def unsqueeze_to(g, shape, dims, keepdim):
    """Undo a reduction's squeeze so `g` broadcasts against the input again."""
    if keepdim or not shape:
        return g
    if dims is None:
        return g.reshape((1,) * len(shape))
    out = list(g.shape)
    for d in dims:
        out.insert(d, 1)
    return g.reshape(out)


def _sum_kernel(a, dims, keepdim, dtype):
    acc = dtype.np if dtype is not None else (
        np.int64 if a.dtype.kind in "biu" else
        (np.float32 if a.dtype.itemsize == 2 and a.dtype.kind == "f" or str(a.dtype) == "bfloat16"
         else a.dtype))
    out_dtype = dtype.np if dtype is not None else (np.int64 if a.dtype.kind in "biu" else a.dtype)
    r = np.sum(a, axis=dims, keepdims=keepdim, dtype=acc)
    return np.asarray(r).astype(out_dtype, copy=False)


def _sum_vjp(ctx, g):
    shape = ctx.shapes[0]
    _, dims, keepdim, _ = ctx.args
    return (unsqueeze_to(g, shape, dims, keepdim).expand(shape), None, None, None)


SUM = register("sum", _sum_kernel, vjp=_sum_vjp, save=(1, 2, 3), tags=("reduction",),
               amp_policy="fp32")


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = reduce_dims(dim, input._data.ndim, "sum")
    res = dispatch(SUM, (input, dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "sum")


def _sum_to_size_kernel(a, shape):
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    r = np.sum(a, axis=axes, keepdims=True) if axes else a.copy()
    return r.reshape(shape)


SUM_TO_SIZE = register("sum_to_size", _sum_to_size_kernel, save=(),
                       vjp=lambda ctx, g: (g.expand(ctx.shapes[0]), None))


def sum_to_size(self, *size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(size)
    if size == self._data.shape:
        return self
    return dispatch(SUM_TO_SIZE, (self, size))


def _mean_kernel(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype.np)
    if a.dtype.kind in "biu":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_kind_name(a.dtype)}")
    acc = np.float32 if a.dtype.itemsize == 2 and a.dtype.kind != "c" else a.dtype
    r = np.mean(a, axis=dims, keepdims=keepdim, dtype=acc)
    return np.asarray(r).astype(a.dtype, copy=False)


def _kind_name(npd):
    from ._elementwise import type_name
    return type_name(D.from_numpy_dtype(npd))


def _mean_vjp(ctx, g):
    shape = ctx.shapes[0]
    _, dims, keepdim, _ = ctx.args
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return (unsqueeze_to(g, shape, dims, keepdim).expand(shape) / n, None, None, None)


MEAN = register("mean", _mean_kernel, vjp=_mean_vjp, save=(1, 2, 3), tags=("reduction",),
                amp_policy="fp32")


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = reduce_dims(dim, input._data.ndim, "mean")
    res = dispatch(MEAN, (input, dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "mean")


_export(sum, mean)


def _install():
    Tensor.sum = sum
    Tensor.mean = mean
    Tensor.sum_to_size = sum_to_size


_install()
