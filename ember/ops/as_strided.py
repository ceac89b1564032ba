"""as_strided: a view by explicit sizes, strides and storage offset, and its scatter
inverse (as_strided_scatter, which its backward and CopySlices use).

Note: strides and offsets are in elements of the input's storage, as in PyTorch; the
kernel views the memory the input starts at, so an offset before the input's first
element is not supported (NotImplementedError).
"""
import numpy as np

from .._dispatch import dispatch
from ._registry import register

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["as_strided", "as_strided_scatter"]


def _as_strided_kernel(a, size, stride, storage_offset=0):
    """`storage_offset` is relative to a's first element (the wrapper translates it)."""
    if storage_offset < 0:
        raise NotImplementedError("as_strided: an offset before the input's first element")
    flat = _storage_flat(a)
    return np.lib.stride_tricks.as_strided(flat[storage_offset:], shape=tuple(size),
                                           strides=tuple(s * a.itemsize for s in stride))


def _storage_flat(a):
    """A 1-d view of the memory `a` starts at (contiguous inputs only)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    return np.lib.stride_tricks.as_strided(a, shape=(a.size,), strides=(a.itemsize,))


def _as_strided_vjp(ctx, g):
    """grad_input[p] = sum of g over the output elements read from storage position p.

    Windows may overlap (unfold-style framing), so the gradient accumulates (index_add),
    as PyTorch's as_strided_backward does; positions are taken on the input's contiguous
    layout, relative to its first element (the forward's storage view)."""
    from .creation import tensor, zeros
    shape = ctx.shapes[0]
    _, size, stride, off = ctx.args
    pos = np.full(tuple(size), off, dtype=np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        step = np.arange(n, dtype=np.int64) * st
        pos += step.reshape((n,) + (1,) * (len(size) - k - 1))
    flat = zeros(int(np.prod(shape, dtype=np.int64)), dtype=g.dtype)
    grad = flat.index_add(0, tensor(pos.reshape(-1)), g.reshape(-1))
    return grad.reshape(shape), None, None, None


def _as_strided_meta(a, size, stride, storage_offset=0):
    """PyTorch's as_strided checks. NumPy would read past the storage, so this runs
    before the kernel; the storage reachable is the root base's, from a's start."""
    base, isz = a._base, a.element_size()
    have = a.numel() if base is None else \
        base.numel() * base.element_size() // isz - a.storage_offset()
    _check_strided(size, stride, storage_offset, have, isz)
    return tuple(size), a.dtype


def _check_strided(size, stride, storage_offset, have, isz):
    """The region (size, stride, offset) must fit in `have` elements of `isz` bytes."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    need = 0 if 0 in size else storage_offset + 1 + sum(
        (n - 1) * st for n, st in zip(size, stride))
    if need > have:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset}, and itemsize {isz} requiring a storage "
                           f"size of {need * isz} are out of bounds for storage of size "
                           f"{have * isz}")


AS_STRIDED = register("as_strided", _as_strided_kernel, view=True, save=(1, 2, 3),
                      meta=_as_strided_meta, check=True, vjp=_as_strided_vjp,
                      schema="as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
                             "SymInt storage_offset=0) -> Tensor(a)", tags=("prim",))


def _as_strided_scatter_kernel(a, src, size, stride, storage_offset=0):
    out = np.array(a, copy=True, order="C")
    v = _as_strided_kernel(out, size, stride, storage_offset or 0)
    v[...] = src
    return out


def _as_strided_scatter_vjp(ctx, g):
    _, _, size, stride, off = ctx.args
    from .creation import zeros
    ga = as_strided_scatter(g, zeros(size, dtype=g.dtype), size, stride, off) \
        if ctx.needs_input_grad[0] else None
    gs = as_strided(g.contiguous(), size, stride, off) if ctx.needs_input_grad[1] else None
    return ga, gs, None, None, None


def _as_strided_scatter_meta(a, src, size, stride, storage_offset=0):
    """The region's checks (on a contiguous copy of a) and src's size (NumPy would
    broadcast it), before the kernel runs."""
    _check_strided(size, stride, storage_offset, a.numel(), a.element_size())
    if tuple(src.shape) != tuple(size):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size)}")
    return tuple(a.shape), a.dtype


AS_STRIDED_SCATTER = register("as_strided_scatter", _as_strided_scatter_kernel,
                              meta=_as_strided_scatter_meta, check=True, tags=("prim", "scatter"),
                              vjp=_as_strided_scatter_vjp, save=(2, 3, 4),
                              schema="as_strided_scatter(Tensor self, Tensor src, SymInt[] size, "
                                     "SymInt[] stride, SymInt storage_offset=0) -> Tensor")


def as_strided(input, size, stride, storage_offset=None):
    rel = 0 if storage_offset is None else storage_offset - input.storage_offset()
    return dispatch(AS_STRIDED, (input, tuple(size), tuple(stride), rel))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return dispatch(AS_STRIDED_SCATTER, (input, src, tuple(size), tuple(stride),
                                         storage_offset or 0))


METHODS["as_strided"] = as_strided
