"""Reductions: sum, mean, prod, max/min, arg*, all/any, var/std, the NaN-ignoring
nansum/nanmean, logsumexp, count_nonzero and aminmax, over dims, with PyTorch's dtype
rules and keepdim.

Note: integer and bool inputs to sum/prod accumulate in int64 (PyTorch's
BOOL_TO_LONG / integral promotion); half precision accumulates in float32. The p-norms
(torch.norm, dist) are in vector_norm.py, one layer up.
"""
import builtins
import math
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import write_out, type_name
from ._lowp import cast
from ._registry import register, check_dtype_arg, export

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def reduce_dims(dim, ndim, opname):
    """Normalize a dim argument to a sorted tuple of non-negative axes (None = all)."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        dims = tuple(_wrap_dim(d, ndim, opname) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        dims = tuple(sorted(dims))
    else:
        dims = (_wrap_dim(dim, ndim, opname),)
    return dims if ndim else None      # a 0-d tensor's only "dim" is the whole tensor


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


def reduced_shape(shape, dims, keepdim):
    """The shape left by reducing `dims` (None = all; () = none) of `shape`."""
    shape = tuple(shape)
    if dims is None:
        return (1,) * len(shape) if keepdim else ()
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def _int_to_long_meta(name):
    """sum/prod: ints and bool accumulate in int64 unless dtype= says otherwise."""
    def meta(a, dims, keepdim, dtype):
        check_dtype_arg(dtype, name)
        out = dtype if dtype is not None else D.int64 if a.dtype._kind < 2 else a.dtype
        return reduced_shape(a.shape, dims, keepdim), out
    return meta


def _acc_dtype(a, dtype):
    """(accumulate, output) NumPy dtypes: ints/bool -> int64, half precision in float32."""
    if dtype is not None:
        out = dtype.np
    elif a.dtype.kind in "biu":
        out = np.dtype(np.int64)
    else:
        out = a.dtype
    acc = np.float32 if out.kind == "f" and out.itemsize == 2 or out == D.bfloat16.np else out
    return acc, out


def _sum_kernel(a, dims, keepdim, dtype):
    acc, out = _acc_dtype(a, dtype)
    # np.add.reduce is what np.sum calls on an ndarray, without its Python wrapper
    r = _add_reduce(a, axis=dims, keepdims=keepdim, dtype=acc)
    if r.__class__ is not np.ndarray:
        r = np.asarray(r)
    return r if r.dtype == out else cast(r, out)


_add_reduce = np.add.reduce


def _sum_vjp(ctx, g):
    shape = ctx.shapes[0]
    _, dims, keepdim, _ = ctx.args
    if g.dim():                         # a 0-d gradient (a full sum) expands as it is
        g = unsqueeze_to(g, shape, dims, keepdim)
    return (g.expand(shape), None, None, None)


SUM = register("sum", _sum_kernel, vjp=_sum_vjp, save=(1, 2, 3), tags=("prim", "reduction"),
               meta=_int_to_long_meta("sum"),
               schema="sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                      "ScalarType? dtype=None) -> Tensor")


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = reduce_dims(dim, input._data.ndim, "sum")
    dtype = check_dtype_arg(dtype, "sum")
    res = dispatch(SUM, (input, dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "sum")


def _sum_to_size_kernel(a, shape):
    lead = a.ndim - len(shape)
    have = a.shape[lead:]
    if lead < 0 or have != tuple(shape) and builtins.any(
            s != 1 and s != n for s, n in zip(shape, have)):
        raise ValueError("not expandable")          # run_kernel then raises the meta's error
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and have[i] != 1)
    if not axes:
        return a.copy().reshape(shape)
    if a.dtype.kind in "biu":
        return np.sum(a, axis=axes, keepdims=True).reshape(shape)
    # the ufunc's reduce directly (np.sum's Python wrapper costs more than a bias-sized sum);
    # bf16/fp16 sum in float32 and round once
    acc, out = _acc_dtype(a, None)
    r = _add_reduce(a, axis=axes, keepdims=True, dtype=acc)
    return (r if acc == out else cast(r, out)).reshape(shape)


def _sum_to_size_meta(a, shape):
    shape, have = tuple(shape), tuple(a.shape)
    lead = len(have) - len(shape)
    if lead < 0 or builtins.any(n != 1 and n != have[lead + i] for i, n in enumerate(shape)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(have)}}}.")
    return shape, a.dtype


def _sum_to_size_decomp(a, size):
    """sum (keepdim) over the leading dims and the dims `size` has as 1, then view."""
    from .. import _prims as P
    lead = a.dim() - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and a.shape[lead + i] != 1]
    r = P.sum(a, tuple(dims), True, None) if dims else P.clone(a, None)
    return P.view(r, list(size))


SUM_TO_SIZE = register("sum_to_size", _sum_to_size_kernel, save=(), meta=_sum_to_size_meta,
                       tags=("reduction",), decomp=_sum_to_size_decomp,
                       vjp=lambda ctx, g: (g.expand(ctx.shapes[0]), None),
                       schema="sum_to_size(Tensor self, SymInt[] size) -> Tensor")


def sum_to_size(self, *size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(size)
    if size == ():                                    # aten's sum_to: () is a full sum
        return self.sum()
    if size == self._data.shape:
        return self
    return dispatch(SUM_TO_SIZE, (self, size))


def _mean_meta(a, dims, keepdim, dtype):
    out = check_dtype_arg(dtype, "mean") or a.dtype
    if out._kind < 2:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_kind_name(out.np)}")
    return reduced_shape(a.shape, dims, keepdim), out


def _mean_kernel(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype.np)
    if a.dtype.kind in "biu":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_kind_name(a.dtype)}")
    acc = np.float32 if a.dtype.itemsize == 2 and a.dtype.kind != "c" else a.dtype
    if a.size == 0:     # NaN, as torch, without NumPy's "Mean of empty slice" warning
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = np.mean(a, axis=dims, keepdims=keepdim, dtype=acc)
    else:
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


def _reduced_count(a, dims):
    """How many elements each output of a reduction over `dims` sums."""
    nd = a.dim()
    if dims is None or (not isinstance(dims, int) and len(dims) == 0) or nd == 0:
        return a.numel()
    dims = [dims] if isinstance(dims, int) else dims
    n = 1
    for d in {d % nd for d in dims}:
        n *= a.shape[d]
    return n


def _mean_decomp(a, dims, keepdim=False, dtype=None):
    """sum / count (the sum in the requested dtype)."""
    from .. import _prims as P
    return P.div(P.sum(a, dims, keepdim, dtype), _reduced_count(a, dims))


MEAN = register("mean", _mean_kernel, vjp=_mean_vjp, save=(1, 2, 3), tags=("reduction",),
                meta=_mean_meta, decomp=_mean_decomp,
                schema="mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
                       "ScalarType? dtype=None) -> Tensor")


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dims = reduce_dims(dim, input._data.ndim, "mean")
    dtype = check_dtype_arg(dtype, "mean")
    res = dispatch(MEAN, (input, dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "mean")


export(__all__, sum, mean)


# ------------------------------------------------------------------ return types

class _ReturnType(tuple):
    """A torch.return_types structseq: a tuple whose items also have names."""
    _fields = ()

    def __new__(cls, *items):
        return tuple.__new__(cls, items)

    def __getattr__(self, name):
        try:
            return self[self._fields.index(name)]
        except ValueError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'") from None

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), tuple(self))


class return_types:
    """ember.return_types: the named-tuple results of max/min/sort/... (torch.return_types)."""


def return_type(name, fields):
    """The torch.return_types.<name> class (created once, shared by every op family)."""
    cls = getattr(return_types, name, None)
    if cls is None:
        cls = type(name, (_ReturnType,), {"_fields": tuple(fields), "__slots__": (),
                                          "__module__": "ember",
                                          "__qualname__": f"return_types.{name}"})
        setattr(return_types, name, cls)
    return cls


# ----------------------------------------------------------------------- prod

def _prod_kernel(a, dims, keepdim, dtype):
    acc, out = _acc_dtype(a, dtype)
    return np.asarray(np.prod(a.astype(acc, copy=False), axis=dims, keepdims=keepdim)).astype(
        out, copy=False)


def _prod_vjp(ctx, g):
    """PyTorch's prod_backward, zeros included: d/dx_i = product of the other elements."""
    x, dims, keepdim, _ = ctx.args
    g = unsqueeze_to(g, ctx.shapes[0], dims, keepdim)
    zero = x == 0
    safe = x + zero                                   # zeros replaced by ones
    rest = dispatch(PROD, (safe, dims, True, None))   # product of the nonzero elements
    nzeros = zero.sum(dims, keepdim=True) if dims is not None else zero.sum().reshape(
        (1,) * x.ndim)
    factor = ((nzeros == 0) & ~zero) * (rest / safe) + (zero & (nzeros == 1)) * rest
    return (g * factor.conj(), None, None, None)


PROD = register("prod", _prod_kernel, vjp=_prod_vjp, save=(0,), tags=("prim", "reduction"),
                meta=_int_to_long_meta("prod"), amp_policy="fp32",
                schema="prod.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                       "ScalarType? dtype=None) -> Tensor")


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dim is not None and not isinstance(dim, int) and not hasattr(dim, "__index__"):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = reduce_dims(dim, input._data.ndim, "prod")
    dtype = check_dtype_arg(dtype, "prod")
    res = dispatch(PROD, (input, dims, keepdim, dtype))
    return res if out is None else write_out(out, res, "prod")


# ------------------------------------------------------------ max/min family

def _check_not_complex(a, name):
    if a.dtype.kind == "c":
        cname = {"max": "max_all", "min": "min_all", "amax": "max_values_cpu",
                 "amin": "min_values_cpu", "max_dim": "max_cpu", "min_dim": "min_cpu"}[name]
        from ._elementwise import type_name
        raise NotImplementedError(f'"{cname}" not implemented for '
                                  f"'{type_name(D.from_numpy_dtype(a.dtype))}'")


def _check_nonempty(a, dims, name):
    """PyTorch refuses to reduce an empty extent (there is no identity for max)."""
    if dims is None:
        if a.size == 0:
            msg = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            if name in ("argmax", "argmin"):
                raise IndexError(msg)
            raise RuntimeError(msg + " Specify the reduction dim with the 'dim' argument.")
        return
    for d in dims:
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _extreme_meta(name):
    """max/min (full), max_dim/min_dim (values, indices) and amax/amin."""
    def meta(a, dims=None, keepdim=False):
        _check_not_complex(a._data, name)
        if name.endswith("_dim"):
            if not a.dim():
                return ((), a.dtype), ((), D.int64)
            _check_nonempty(a._data, (dims,), name.split("_")[0])
            shape = reduced_shape(a.shape, (dims,), keepdim)
            return (shape, a.dtype), (shape, D.int64)
        _check_nonempty(a._data, dims, name)
        return reduced_shape(a.shape, dims, keepdim), a.dtype
    return meta


def _full_kernel(np_fn, name):
    def kernel(a):
        _check_not_complex(a, name)
        _check_nonempty(a, None, name)
        return np.asarray(np_fn(a))
    return kernel


def _evenly_distribute_vjp(ctx, g):
    """PyTorch 1.7: a full max/min spreads the gradient evenly over all tied elements."""
    x = ctx.args[0]
    value = ctx.out
    mask = (x == value) | (x.isnan() & value.isnan())
    return (mask * (g / mask.sum()),)


def _extreme_decomp(prim):
    """max()/min() over every element: amax/amin over all dims."""
    def decomp(a):
        from .. import _prims as P
        return getattr(P, prim)(a, tuple(range(a.dim())), False)
    return decomp


MAX = register("max", _full_kernel(np.max, "max"), meta=_extreme_meta("max"),
               vjp=_evenly_distribute_vjp, save_out=True, tags=("reduction",),
               decomp=_extreme_decomp("amax"), schema="max(Tensor self) -> Tensor")
MIN = register("min", _full_kernel(np.min, "min"), meta=_extreme_meta("min"),
               vjp=_evenly_distribute_vjp, save_out=True, tags=("reduction",),
               decomp=_extreme_decomp("amin"), schema="min(Tensor self) -> Tensor")


def _dim_kernel(arg_fn, name):
    def kernel(a, dim, keepdim):
        _check_not_complex(a, name)
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        _check_nonempty(a, (dim,), name.split("_")[0])
        idx = np.expand_dims(_arg(arg_fn, a, dim), dim)
        values = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        return values, idx.astype(np.int64, copy=False)
    return kernel


def _arg(arg_fn, a, dim):
    """np.argmax/argmin (first index of the extreme, NaN counts as the extreme)."""
    if a.dtype == D.bfloat16.np:
        a = a.astype(np.float32)
    return arg_fn(a, axis=dim)


def _select_vjp(ctx, g, _gi=None):
    """With dim=, only the returned index gets the gradient (a one-hot along dim)."""
    shape = ctx.shapes[0]
    if not shape:
        return (g, None, None)
    _, dim, keepdim = ctx.args
    idx = ctx.out[1]
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    pos = [1] * len(shape)
    pos[dim] = shape[dim]
    from .creation import arange
    onehot = arange(shape[dim]).reshape(pos) == idx
    return (g * onehot, None, None)


MAX_DIM = register("max_dim", _dim_kernel(np.argmax, "max_dim"), meta=_extreme_meta("max_dim"),
                   vjp=_select_vjp, save=(1, 2), save_out=True, nondiff_outputs=(1,),
                   tags=("prim", "reduction"),
                   schema="max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
                          "Tensor indices)")
MIN_DIM = register("min_dim", _dim_kernel(np.argmin, "min_dim"), meta=_extreme_meta("min_dim"),
                   vjp=_select_vjp, save=(1, 2), save_out=True, nondiff_outputs=(1,),
                   tags=("prim", "reduction"),
                   schema="min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, "
                          "Tensor indices)")


def _max_min(input, dim, keepdim, out, name, full_op, dim_op, pairwise):
    if isinstance(dim, Tensor):
        return pairwise(input, dim, out=out)
    if dim is None:
        res = dispatch(full_op, (input,))
        return res if out is None else write_out(out, res, name)
    if isinstance(dim, (list, tuple)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(dim).__name__}), but expected (Tensor input, int dim, "
                        "bool keepdim = False)")
    d = _wrap_dim(dim, input._data.ndim, name)
    values, indices = dispatch(dim_op, (input, d, keepdim))
    if out is not None:
        values = write_out(out[0], values, name)
        indices = write_out(out[1], indices, name)
    return return_type(name, ("values", "indices"))(values, indices)


def max(input, dim=None, keepdim=False, *, out=None):
    """max(input) -> 0-d; max(input, dim) -> (values, indices); max(input, other) = maximum."""
    from .pointwise import maximum
    return _max_min(input, dim, keepdim, out, "max", MAX, MAX_DIM, maximum)


def min(input, dim=None, keepdim=False, *, out=None):
    """min(input) -> 0-d; min(input, dim) -> (values, indices); min(input, other) = minimum."""
    from .pointwise import minimum
    return _max_min(input, dim, keepdim, out, "min", MIN, MIN_DIM, minimum)


def _amax_kernel(np_fn, name):
    def kernel(a, dims, keepdim):
        _check_not_complex(a, name)
        _check_nonempty(a, dims, name)
        return np.asarray(np_fn(a, axis=dims, keepdims=keepdim))
    return kernel


def _amax_vjp(ctx, g):
    """amax/amin spread the gradient evenly over the ties along the reduced dims."""
    x, dims, keepdim = ctx.args
    shape = ctx.shapes[0]
    value = unsqueeze_to(ctx.out, shape, dims, keepdim)
    mask = x == value
    count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum().reshape(
        (1,) * len(shape))
    return ((unsqueeze_to(g, shape, dims, keepdim) / count) * mask, None, None)


AMAX = register("amax", _amax_kernel(np.max, "amax"), meta=_extreme_meta("amax"),
                vjp=_amax_vjp, save=(0, 1, 2), save_out=True, tags=("prim", "reduction"),
                schema="amax(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor")
AMIN = register("amin", _amax_kernel(np.min, "amin"), meta=_extreme_meta("amin"),
                vjp=_amax_vjp, save=(0, 1, 2), save_out=True, tags=("prim", "reduction"),
                schema="amin(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor")


def amax(input, dim=(), keepdim=False, *, out=None):
    res = dispatch(AMAX, (input, reduce_dims(dim, input._data.ndim, "amax"), keepdim))
    return res if out is None else write_out(out, res, "amax")


def amin(input, dim=(), keepdim=False, *, out=None):
    res = dispatch(AMIN, (input, reduce_dims(dim, input._data.ndim, "amin"), keepdim))
    return res if out is None else write_out(out, res, "amin")


def _argext_kernel(arg_fn, name):
    def kernel(a, dim, keepdim):
        if a.dtype.kind in "bc":
            raise RuntimeError(f"{name}(): does not support "
                               f"{'bool' if a.dtype.kind == 'b' else 'complex'} input")
        if dim is None:
            _check_nonempty(a, None, name)
            r = _arg(arg_fn, a.reshape(-1), 0)
            return np.full((1,) * a.ndim if keepdim else (), r, np.int64)
        if a.ndim == 0:
            return np.zeros((), np.int64)
        _check_nonempty(a, (dim,), name)
        r = _arg(arg_fn, a, dim)
        return (np.expand_dims(r, dim) if keepdim else np.asarray(r)).astype(np.int64)
    return kernel


def _argext_meta(name):
    def meta(a, dim, keepdim):
        if a._dtype._kind in (0, 3):
            raise RuntimeError(f"{name}(): does not support "
                               f"{'bool' if a._dtype._kind == 0 else 'complex'} input")
        dims = None if dim is None else (dim,) if a.dim() else None
        _check_nonempty(a._data, dims, name)
        if dim is not None and not a.dim():
            return (), D.int64
        return reduced_shape(a.shape, dims, keepdim), D.int64
    return meta


ARGMAX = register("argmax", _argext_kernel(np.argmax, "argmax"), meta=_argext_meta("argmax"),
                  tags=("prim", "reduction"),
                  schema="argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")
ARGMIN = register("argmin", _argext_kernel(np.argmin, "argmin"), meta=_argext_meta("argmin"),
                  tags=("prim", "reduction"),
                  schema="argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor")


def argmax(input, dim=None, keepdim=False, *, out=None):
    """The FIRST index of the maximum (PyTorch 1.7); dim=None searches the flattened input."""
    d = None if dim is None else _wrap_dim(dim, input._data.ndim, "argmax")
    res = dispatch(ARGMAX, (input, d, keepdim))
    return res if out is None else write_out(out, res, "argmax")


def argmin(input, dim=None, keepdim=False, *, out=None):
    """The FIRST index of the minimum (PyTorch 1.7); dim=None searches the flattened input."""
    d = None if dim is None else _wrap_dim(dim, input._data.ndim, "argmin")
    res = dispatch(ARGMIN, (input, d, keepdim))
    return res if out is None else write_out(out, res, "argmin")


# ------------------------------------------------------------------ all / any

def _logical_kernel(np_fn):
    def kernel(a, dims, keepdim):
        r = np.asarray(np_fn(a, axis=dims, keepdims=keepdim))
        return r.astype(np.uint8) if a.dtype == np.uint8 else r
    return kernel


def _logical_meta(a, dims, keepdim):
    """all/any: bool, or uint8 for uint8 input (PyTorch's legacy rule)."""
    return reduced_shape(a.shape, dims, keepdim), D.uint8 if a.dtype is D.uint8 else D.bool


ALL = register("all", _logical_kernel(np.all), meta=_logical_meta, tags=("prim", "reduction"),
               schema="all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")
ANY = register("any", _logical_kernel(np.any), meta=_logical_meta, tags=("prim", "reduction"),
               schema="any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor")


def _logical(op, input, dim, keepdim, out):
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dims = ()                      # all/any over no dims: an elementwise test
    else:
        dims = reduce_dims(dim, input._data.ndim, op.name)
    res = dispatch(op, (input, dims, keepdim))
    if out is None:
        return res
    if out._dtype not in (D.bool, D.uint8):
        from ._elementwise import type_name
        raise RuntimeError(f"{op.name} only supports bool tensor for result, got: "
                           f"{type_name(out._dtype)}")
    if out._dtype is D.bool and res._dtype is D.uint8:
        res = res.bool()
    return write_out(out, res, op.name)


def all(input, dim=None, keepdim=False, *, out=None):
    return _logical(ALL, input, dim, keepdim, out)


def any(input, dim=None, keepdim=False, *, out=None):
    return _logical(ANY, input, dim, keepdim, out)


export(__all__, prod, max, min, amax, amin, argmax, argmin, all, any)
__all__.append("return_types")


# ------------------------------------------------------------------ var / std

def _var_kernel(a, dims, correction, keepdim):
    if a.dtype.kind not in "fc" and a.dtype != D.bfloat16.np:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    out = np.dtype(D.from_numpy_dtype(a.dtype).to_real().np)
    x = a.astype(np.float32) if a.dtype.itemsize == 2 else a
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # ember warns like torch instead
        r = np.var(x, axis=dims, ddof=correction, keepdims=keepdim)
    return np.asarray(r).astype(out, copy=False)


def _var_vjp(ctx, g):
    """d var / dx = 2 (x - mean) / (N - correction)."""
    x, dims, correction, keepdim = ctx.args
    shape = ctx.shapes[0]
    g = unsqueeze_to(g, shape, dims, keepdim)
    centered = x - (x.mean(dims, keepdim=True) if dims is not None else x.mean())
    return (g * centered * (2.0 * _inv_dof(shape, dims, correction)), None, None, None)


def _std_vjp(ctx, g):
    """d std / dx = (x - mean) / (std (N - correction)); zero where std == 0, as PyTorch."""
    x, dims, correction, keepdim = ctx.args
    shape = ctx.shapes[0]
    std, flat = ctx.out, ctx.out == 0
    g = unsqueeze_to(g / (std + flat) * ~flat, shape, dims, keepdim)
    centered = x - (x.mean(dims, keepdim=True) if dims is not None else x.mean())
    return (g * centered * _inv_dof(shape, dims, correction), None, None, None)


def _inv_dof(shape, dims, correction):
    """1 / (N - correction), infinite (as C++'s double division) when it is zero."""
    dof = _count(shape, dims) - correction
    return 1.0 / dof if dof else float("inf")


def _count(shape, dims):
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def _std_kernel(a, dims, correction, keepdim):
    with np.errstate(all="ignore"):
        return np.sqrt(_var_kernel(a, dims, correction, keepdim))


def _var_meta(a, dims, correction, keepdim):
    if a.dtype._kind < 2:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return reduced_shape(a.shape, dims, keepdim), a.dtype.to_real()


def _std_decomp(a, dims, correction, keepdim):
    return dispatch(VAR, (a, dims, correction, keepdim)).sqrt()


VAR = register("var", _var_kernel, vjp=_var_vjp, save=(0,),
               tags=("prim", "reduction"), meta=_var_meta,
               schema="var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                      "bool keepdim=False) -> Tensor")
STD = register("std", _std_kernel, vjp=_std_vjp, save=(0,), save_out=True, meta=_var_meta,
               decomp=_std_decomp, tags=("reduction",),
               schema="std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                      "bool keepdim=False) -> Tensor")


def _var_args(name, input, dim, unbiased, keepdim, correction):
    """Normalize var/std's three signatures to (dims, correction, keepdim)."""
    if isinstance(dim, bool):                      # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return reduce_dims(dim, input._data.ndim, name), correction, keepdim


def _var_call(op, input, dim, unbiased, keepdim, correction, out):
    args = _var_args(op.name, input, dim, unbiased, keepdim, correction)
    res = dispatch(op, (input,) + args)
    if _count(input.shape, args[0]) - args[1] <= 0:
        warnings.warn(f"{op.name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      stacklevel=3)
    return res if out is None else write_out(out, res, op.name)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return _var_call(VAR, input, dim, unbiased, keepdim, correction, out)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return _var_call(STD, input, dim, unbiased, keepdim, correction, out)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v = var(input, dim, unbiased, keepdim, correction=correction)
    return v, mean(input, None if isinstance(dim, bool) else dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    s = std(input, dim, unbiased, keepdim, correction=correction)
    return s, mean(input, None if isinstance(dim, bool) else dim, keepdim)


export(__all__, var, std, var_mean, std_mean)


# ------------------------------------------------------------------- nansum

def _no_complex_nansum(is_complex):
    if is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")


def _nansum_kernel(a, dims, keepdim, dtype):
    _no_complex_nansum(a.dtype.kind == "c")
    acc, out = _acc_dtype(a, dtype)
    r = np.nansum(a.astype(acc, copy=False), axis=dims, keepdims=keepdim)
    return np.asarray(r).astype(out, copy=False)


def _nansum_meta(a, dims, keepdim, dtype):
    check_dtype_arg(dtype, "nansum")
    _no_complex_nansum(a.dtype._kind == 3)
    out = dtype if dtype is not None else D.int64 if a.dtype._kind < 2 else a.dtype
    return reduced_shape(a.shape, dims, keepdim), out


def _nansum_vjp(ctx, g):
    """NaNs do not contribute, so they get no gradient."""
    x, dims, keepdim, _ = ctx.args
    shape = ctx.shapes[0]
    return (unsqueeze_to(g, shape, dims, keepdim).expand(shape) * x.isnan().logical_not(),
            None, None, None)


def _nansum_decomp(a, dims=None, keepdim=False, dtype=None):
    """sum with NaNs replaced by zeros."""
    from .. import _prims as P
    if a.dtype.is_floating_point or a.dtype.is_complex:
        a = P.where(P.isnan(a), P.full((), 0, a.dtype), a)
    return P.sum(a, dims, keepdim, dtype)


NANSUM = register("nansum", _nansum_kernel, meta=_nansum_meta, vjp=_nansum_vjp, save=(0,),
                  tags=("reduction",), decomp=_nansum_decomp,
                  schema="nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
                         "ScalarType? dtype=None) -> Tensor")


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    res = dispatch(NANSUM, (input, reduce_dims(dim, input._data.ndim, "nansum"), keepdim, dtype))
    return res if out is None else write_out(out, res, "nansum")


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """PyTorch's composite: nansum / the number of non-NaN elements."""
    if input._dtype._kind < 2:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {type_name(input._dtype)}")
    count = input.isnan().logical_not().sum(dim, keepdim=keepdim)
    res = nansum(input, dim, keepdim, dtype=dtype)
    res = res / count.to(res.dtype)
    return res if out is None else write_out(out, res, "nanmean")


# ---------------------------------------------------------------- logsumexp

def _lse_out_dtype(dtype):
    return D.get_default_dtype() if dtype._kind < 2 else dtype


def _lse_kernel(a, dims, keepdim):
    out = _lse_out_dtype(D.from_numpy_dtype(a.dtype)).np
    x = a.astype(np.float32 if out.itemsize == 2 and out.kind != "c" else out, copy=False)
    with np.errstate(all="ignore"):
        if x.size == 0:
            return np.asarray(np.log(np.sum(np.exp(x), axis=dims, keepdims=keepdim))).astype(out)
        m = np.array(np.max(x.real, axis=dims, keepdims=True))   # PyTorch: max of the real part
        m[np.isinf(m)] = 0
        s = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=keepdim))
        r = s + (m if keepdim else m.reshape(s.shape))
    return np.asarray(r).astype(out, copy=False)


def _lse_meta(a, dims, keepdim):
    return reduced_shape(a.shape, dims, keepdim), _lse_out_dtype(a.dtype)


def _lse_vjp(ctx, g):
    """d logsumexp / dx = softmax(x) = exp(x - result)."""
    x, dims, keepdim = ctx.args
    shape = ctx.shapes[0]
    g = unsqueeze_to(g, shape, dims, keepdim)
    r = unsqueeze_to(ctx.out, shape, dims, keepdim)
    return (g * (x - r).exp().conj(), None, None)


def _lse_decomp(a, dims, keepdim):
    x = a if a.dtype._kind >= 2 else a.to(_lse_out_dtype(a.dtype))
    if x.numel() == 0:
        return x.exp().sum(dims, keepdim=keepdim).log()
    m = amax(x.real if x.is_complex() else x, () if dims is None else dims, keepdim=True)
    m = m.masked_fill(m.abs() == math.inf, 0)
    s = (x - m).exp().sum(dims, keepdim=keepdim).log()
    return s + (m if keepdim else m.reshape(tuple(s.shape)))


LOGSUMEXP = register("logsumexp", _lse_kernel, meta=_lse_meta, vjp=_lse_vjp, save=(0,),
                     save_out=True, decomp=_lse_decomp, tags=("reduction",),
                     schema="logsumexp(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor")


def logsumexp(input, dim, keepdim=False, *, out=None):
    res = dispatch(LOGSUMEXP, (input, reduce_dims(dim, input._data.ndim, "logsumexp"), keepdim))
    return res if out is None else write_out(out, res, "logsumexp")


# ------------------------------------------------------------ count_nonzero

def _count_nonzero_kernel(a, dims):
    return np.asarray(np.sum(a != 0, axis=dims, dtype=np.int64))


def _count_nonzero_decomp(a, dims):
    """sum of (a != 0) as int64."""
    from .. import _prims as P
    if dims is not None and len(dims) == 0:
        dims = None
    return P.sum(P.ne(a, 0), dims, False, D.int64)


COUNT_NONZERO = register("count_nonzero", _count_nonzero_kernel, tags=("reduction",),
                         decomp=_count_nonzero_decomp,
                         meta=lambda a, dims: (reduced_shape(a.shape, dims, False), D.int64),
                         schema="count_nonzero.dim_IntList(Tensor self, int[]? dim) -> Tensor")


def count_nonzero(input, dim=None):
    return dispatch(COUNT_NONZERO, (input, reduce_dims(dim, input._data.ndim, "count_nonzero")))


# ------------------------------------------------------------------ aminmax

def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) in one call: PyTorch's torch.return_types.aminmax (amin/amax gradients)."""
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if input._dtype._kind == 3:
        raise NotImplementedError(f'"aminmax_cpu" not implemented for '
                                  f"'{type_name(input._dtype)}'")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = ()
    else:
        dims = _wrap_dim(dim, input._data.ndim, "aminmax")
        if input._data.ndim and input._data.shape[dims] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims} to have non-zero size.")
    lo, hi = amin(input, dims, keepdim), amax(input, dims, keepdim)
    if out is not None:
        lo, hi = write_out(out[0], lo, "aminmax"), write_out(out[1], hi, "aminmax")
    return return_type("aminmax", ("min", "max"))(lo, hi)


export(__all__, nansum, nanmean, logsumexp, count_nonzero, aminmax)


def _make_methods():
    for f in (sum, mean, sum_to_size, prod, max, min, amax, amin, argmax, argmin, all, any,
              var, std, nansum, nanmean, logsumexp, count_nonzero, aminmax):
        METHODS[f.__name__] = f


_make_methods()
