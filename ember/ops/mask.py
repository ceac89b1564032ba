"""Masks: masked_fill/masked_select/masked_scatter, where, nonzero/argwhere/nonzero_static.

Note: a bool mask broadcasts against the input as in PyTorch; masked_select and
nonzero have data-dependent output sizes (tag `dynamic_output_shape`), so fake tensors
refuse them with a clear error. indexing.py (the layer above) turns bool indices into
integer ones with `nonzero`, as PyTorch's indexing does.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._elementwise import pointwise, inplace, write_out, type_name, DEFAULT, broadcast_shapes
from ._registry import register, export
from . import shape as S
from .shape import _zeros

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def _cat(tensors):
    from .join import cat       # join is a layer above (it uses shape's views)
    return cat(tensors)


def _const(value, dtype):
    from .creation import tensor
    return tensor(value, dtype=dtype)


# ----------------------------------------------------------------------------- masks

def _masked_fill_kernel(a, mask, value):
    v = np.asarray(value)
    if v.dtype.kind == "c" and a.dtype.kind != "c":
        v = v.real
    return np.where(mask, v.astype(a.dtype), a)


def _masked_fill_vjp(ctx, g):
    _, mask, value = ctx.args
    gi = g.masked_fill(mask, 0) if ctx.needs_input_grad[0] else None
    gv = None
    if ctx.needs_input_grad[2]:
        gv = where(mask, g, _const(0, g.dtype)).sum()
    return gi, None, gv


def _masked_fill_meta(input, mask, value):
    _check_mask_fill(mask, value)
    try:
        shape = broadcast_shapes(tuple(input.shape), tuple(mask.shape))   # keeps SymInts
    except (ValueError, RuntimeError):
        raise RuntimeError(f"The size of tensor a ({input.shape[-1]}) must match the size "
                           f"of tensor b ({mask.shape[-1]}) at non-singleton dimension "
                           f"(masked_fill: shapes {list(input.shape)} and "
                           f"{list(mask.shape)})") from None
    return shape, input.dtype


def _fill_value(value, dtype):
    """A fill value (number or 0-d tensor) as a 0-d tensor of `dtype`."""
    from .. import _prims as P
    if isinstance(value, Tensor):
        return value if value.dtype == dtype else P._to_copy(value, dtype)
    return P.full((), value, dtype)


def _masked_fill_decomp(x, mask, value):
    """where(mask, value, x), the value cast to x's dtype."""
    from .. import _prims as P
    return P.where(mask, _fill_value(value, x.dtype), x)


MASKED_FILL = register("masked_fill", _masked_fill_kernel, save=(1,), vjp=_masked_fill_vjp,
                       meta=_masked_fill_meta, tags=("pointwise",), decomp=_masked_fill_decomp,
                       schema="masked_fill.Tensor(Tensor self, Tensor mask, "
                              "Tensor value) -> Tensor")


def _check_mask_fill(mask, value):
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' must be Tensor, not "
                        f"{type(mask).__name__}")
    if mask._dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_cpp_name(mask._dtype)}")
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")


def _cpp_name(d):
    return {"int64": "long int", "int32": "int", "uint8": "unsigned char", "float32": "float",
            "float64": "double", "int16": "short int", "int8": "signed char"}.get(d.name, d.name)


def masked_fill(input, mask, value):
    _masked_fill_meta(input, mask, value)
    return dispatch(MASKED_FILL, (input, mask, value))


def masked_fill_(self, mask, value):
    _check_mask_fill(mask, value)
    return inplace(MASKED_FILL, self, (self, mask, value))


def _masked_select_kernel(a, mask):
    a2, m2 = np.broadcast_arrays(a, mask)
    return a2[m2]


def _masked_select_vjp(ctx, g):
    _, mask = ctx.args
    shape = np.broadcast_shapes(ctx.shapes[0], mask._data.shape)
    return masked_scatter(_zeros(shape, g.dtype), mask, g), None


def _data_dependent(opname, *tensors):
    """Meta of a `dynamic_output_shape` op: its shape needs values, which meta and fake
    tensors do not have (real ones do: their metas count)."""
    if any(t._backend == "meta" for t in tensors):
        raise RuntimeError(f"{opname}: the output shape depends on the data, which meta and "
                           "fake tensors do not have")


def _masked_select_meta(input, mask):
    if mask._dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    except ValueError:
        raise RuntimeError(f"masked_select(): shapes {list(input.shape)} and "
                           f"{list(mask.shape)} are not broadcastable") from None
    _data_dependent("masked_select", input, mask)
    return (int(np.count_nonzero(np.broadcast_to(mask._data, shape))),), input.dtype


MASKED_SELECT = register("masked_select", _masked_select_kernel, save=(1,),
                         vjp=_masked_select_vjp, meta=_masked_select_meta,
                         tags=("prim", "gather", "dynamic_output_shape"),
                         schema="masked_select(Tensor self, Tensor mask) -> Tensor")


def masked_select(input, mask, *, out=None):
    _masked_select_meta(input, mask)
    res = dispatch(MASKED_SELECT, (input, mask))
    return res if out is None else write_out(out, res, "masked_select")


def _masked_scatter_kernel(a, mask, source):
    out = np.array(a, copy=True)
    m = np.broadcast_to(mask, a.shape)
    k = int(np.count_nonzero(m))
    if k > source.size:
        raise RuntimeError("masked_scatter: expected source to have at least as many elements "
                           "as ones in mask")
    out[m] = source.reshape(-1)[:k]
    return out


def _masked_scatter_vjp(ctx, g):
    _, mask, _ = ctx.args
    gi = g.masked_fill(mask, 0) if ctx.needs_input_grad[0] else None
    gs = None
    if ctx.needs_input_grad[2]:
        src_shape = ctx.shapes[1 + 1]
        numel = int(np.prod(src_shape))
        picked = masked_select(g, mask)
        pad = numel - picked._data.shape[0]
        gs = _cat([picked, _zeros((pad,), g.dtype)]) if pad else picked
        gs = S.reshape(gs, src_shape)
    return gi, None, gs


def _check_masked_scatter_dtypes(input, mask, source):
    """PyTorch's two dtype errors, raised by the meta and by the eager call alike."""
    if mask._dtype is not D.bool:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_cpp_name(mask._dtype)}")
    if source._dtype is not input._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {type_name(input._dtype)} and {type_name(source._dtype)}")


def _masked_scatter_meta(input, mask, source):
    _check_masked_scatter_dtypes(input, mask, source)
    try:
        ok = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape)) == tuple(input.shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"masked_scatter: the mask's shape {list(mask.shape)} must be "
                           f"broadcastable to self's shape {list(input.shape)}")
    return tuple(input.shape), input.dtype


def _masked_scatter_decomp(x, mask, source):
    """The k-th True position takes source's k-th element: positions from a cumsum of the
    mask, values by index_select from the flattened source, then where."""
    from .. import _prims as P
    m = P.expand(mask, list(x.shape))
    flat = P._reshape_copy(P._to_copy(m, D.int64), [-1])
    pos = P.maximum(P.sub(P.cumsum(flat, 0, None), 1), 0)
    vals = P.index_select(P._reshape_copy(source, [-1]), 0, pos)
    return P.where(m, P.view(vals, list(x.shape)), x)


MASKED_SCATTER = register("masked_scatter", _masked_scatter_kernel, save=(1,),
                          vjp=_masked_scatter_vjp, meta=_masked_scatter_meta, tags=("scatter",),
                          decomp=_masked_scatter_decomp,
                          schema="masked_scatter(Tensor self, Tensor mask, "
                                 "Tensor source) -> Tensor")


def masked_scatter(input, mask, source):
    _check_masked_scatter_dtypes(input, mask, source)
    shape = tuple(broadcast_shapes(input._data.shape, mask._data.shape))
    if shape != input._data.shape:
        input = input.expand(shape)
    return dispatch(MASKED_SCATTER, (input, mask, source))


def masked_scatter_(self, mask, source):
    _masked_scatter_meta(self, mask, source)
    return inplace(MASKED_SCATTER, self, (self, mask, source))


# ----------------------------------------------------------------------- where / nonzero

def _where_vjp(ctx, g):
    cond = ctx.args[0]
    zero = _const(0, g.dtype)
    ga = dispatch(WHERE, (cond, g, zero)) if ctx.needs_input_grad[1] else None
    gb = dispatch(WHERE, (cond, zero, g)) if ctx.needs_input_grad[2] else None
    return None, ga, gb


WHERE = pointwise("where", lambda c, a, b: np.where(c, a, b), 3, DEFAULT, vjp=_where_vjp,
                  save=(0,),
                  tags=("pointwise", "prim"),
                  schema="where.self(Tensor condition, Tensor self, Tensor other) -> Tensor")


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not "
                        f"{type(condition).__name__}")
    if condition._dtype is D.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated "
                      "and will be removed in a future version of PyTorch. Use a boolean "
                      "condition instead.", UserWarning, stacklevel=2)
        condition = condition.bool()
    elif condition._dtype is not D.bool:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {type_name(condition._dtype)}")
    res = dispatch(WHERE, (condition, input, other))
    return res if out is None else write_out(out, res, "where")


def _nonzero_meta(a):
    _data_dependent("nonzero", a)
    return (int(np.count_nonzero(a._data)), a.dim()), D.int64


def _nonzero_numpy_meta(a):
    n, _ = _nonzero_meta(a)[0]
    return (((n,), D.int64),) * max(a.dim(), 1)


NONZERO = register("nonzero", lambda a: np.argwhere(a).astype(np.int64), meta=_nonzero_meta,
                   tags=("prim", "dynamic_output_shape"),
                   schema="nonzero(Tensor self) -> Tensor")
NONZERO_NUMPY = register("nonzero_numpy",
                         lambda a: tuple(i.astype(np.int64) for i in np.nonzero(np.atleast_1d(a))),
                         meta=_nonzero_numpy_meta, tags=("prim", "dynamic_output_shape"),
                         schema="nonzero_numpy(Tensor self) -> Tensor[]")


def nonzero(input, *, out=None, as_tuple=False):
    if as_tuple:
        return dispatch(NONZERO_NUMPY, (input,))
    res = dispatch(NONZERO, (input,))
    return res if out is None else write_out(out, res, "nonzero")


def argwhere(input):
    return dispatch(NONZERO, (input,))


def nonzero_static(input, *, size, fill_value=-1):
    """nonzero with a fixed row count: truncated to `size` rows or padded with fill_value."""
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    nz = dispatch(NONZERO, (input,))
    n = nz.shape[0]
    if n >= size:
        return nz[:size]
    from .creation import full
    from .join import cat
    pad = full((size - n, nz.shape[1]), fill_value, dtype=D.int64)
    return cat([nz, pad], 0)


export(__all__, masked_fill, masked_select, masked_scatter, where, nonzero, argwhere,
       nonzero_static)


def _make_methods():
    METHODS["nonzero_static"] = nonzero_static
    METHODS["masked_fill"] = masked_fill
    METHODS["masked_fill_"] = masked_fill_
    METHODS["masked_select"] = masked_select
    METHODS["masked_scatter"] = masked_scatter
    METHODS["masked_scatter_"] = masked_scatter_
    METHODS["where"] = lambda self, condition, other: where(condition, self, other)
    METHODS["nonzero"] = nonzero
    METHODS["argwhere"] = argwhere


_make_methods()
