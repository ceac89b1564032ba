"""Indexing: `Tensor.__getitem__/__setitem__`, gather/scatter, index_select/index_put,
index_add/index_fill, take (masks, where and nonzero are in mask.py, the layer below).

Note: indexing follows PyTorch's applySlicing. Ints, slices, None and Ellipsis
become view ops (select/slice/unsqueeze), so basic indexing aliases memory; what
remains are advanced indices, run by one `index` op (a copy). The registry ops
`index(self, indices, dims)` and `index_put(self, indices, dims, values, accumulate)`
carry the advanced indices as a list of integer tensors plus the dims they index
(PyTorch's `Tensor?[] indices` with the Nones left out), so every list element is a
tensor. Bool masks are turned into integer indices with `nonzero` first, as PyTorch
does. Gradients: index -> index_put(accumulate) into zeros; index_put -> index.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import STATE, dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import inplace, write_out, type_name
from ._registry import register, export
from . import shape as S
from .mask import (_zeros, _const, _fill_value, _data_dependent, masked_fill,  # noqa: F401
                   masked_fill_, masked_select, masked_scatter, masked_scatter_, where,
                   nonzero, argwhere, nonzero_static)

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def _np(x):
    return x._data if isinstance(x, Tensor) else x


# --------------------------------------------------------------------- index / index_put

def _adv_key(ndim, indices, dims):
    key = [slice(None)] * ndim
    for i, d in zip(indices, dims):
        key[d] = _np(i)
    return tuple(key)


def _index_kernel(a, indices, dims):
    return a[_adv_key(a.ndim, indices, dims)]


def _index_shape(shape, indices, dims):
    """NumPy's (and PyTorch's) advanced-indexing result shape: the broadcast index shape
    replaces the indexed dims when they are adjacent, else it comes first."""
    try:
        b = np.broadcast_shapes(*[tuple(i.shape) for i in indices])
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(i.shape)) for i in indices)) from None
    shape = tuple(shape)
    rest = tuple(n for d, n in enumerate(shape) if d not in dims)
    if list(dims) == list(range(dims[0], dims[0] + len(dims))):
        return shape[:dims[0]] + b + shape[dims[-1] + 1:]
    return b + rest


def _index_meta(self, indices, dims, *_):
    """PyTorch's IndexErrors for out-of-range and unbroadcastable indices."""
    for i, d in zip(indices, dims):
        n = self._data.shape[d]
        arr = i._data
        if arr.size:
            bad = arr[(arr < -n) | (arr >= n)]
            if bad.size:
                raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for "
                                 f"dimension {d} with size {n}")
    return _index_shape(self.shape, indices, dims), self.dtype


def _index_vjp(ctx, g):
    _, indices, dims = ctx.args
    z = _zeros(ctx.shapes[0], g.dtype)
    return dispatch(INDEX_PUT, (z, indices, dims, g, True)), None, None


INDEX = register("index", _index_kernel, meta=_index_meta, save=(1,), vjp=_index_vjp,
                 tags=("prim", "gather"),
                 schema="index.Tensor(Tensor self, Tensor?[] indices, int[] dims) -> Tensor")


def _index_put_kernel(a, indices, dims, values, accumulate):
    out = np.array(a, copy=True)
    _put_into(out, indices, dims, values, accumulate)
    return out


def _put_into(out, indices, dims, values, accumulate):
    key = _adv_key(out.ndim, indices, dims)
    if accumulate:
        np.add.at(out, key, values)
    else:
        out[key] = values


def _index_put_meta(self, indices, dims, values, accumulate):
    _check_put_dtype(self, values)
    got, _ = _index_meta(self, indices, dims)
    try:
        ok = np.broadcast_shapes(tuple(values.shape), got) == got
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot "
                           f"be broadcast to indexing result of shape {list(got)}")
    return tuple(self.shape), self.dtype


def _index_put_vjp(ctx, g):
    _, indices, dims, _, accumulate = ctx.args
    n_self, _, _, n_val, _ = ctx.needs_input_grad
    gs = gv = None
    if n_self:
        gs = g if accumulate else dispatch(INDEX_PUT, (g, indices, dims,
                                                       _zeros((), g.dtype), False))
    if n_val:
        gv = dispatch(INDEX, (g, indices, dims))
    return gs, None, None, gv, None


INDEX_PUT = register("index_put", _index_put_kernel, meta=_index_put_meta, save=(1,),
                     vjp=_index_put_vjp, tags=("prim", "scatter", "nondeterministic"),
                     schema="index_put(Tensor self, Tensor?[] indices, int[] dims, "
                            "Tensor values, bool accumulate=False) -> Tensor")

_INDEX_DTYPES = (D.int64, D.int32, D.uint8, D.bool)
_BAD_INDEX = "tensors used as indices must be long, int, byte or bool tensors"


def _mask_to_indices(mask, target_shape, at):
    """A bool mask indexing dims at..at+k of a tensor of `target_shape` -> k long tensors."""
    k = mask._data.ndim
    for j in range(k):
        if at + j >= len(target_shape) or mask._data.shape[j] != target_shape[at + j]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {j} does not "
                             f"match the shape of the indexed tensor {list(target_shape)} at "
                             f"index {at + j}")
    return list(nonzero(mask, as_tuple=True))


def _split_indices(self_shape, indices):
    """Public index lists (Tensor or None per dim, masks allowed) -> (tensors, dims)."""
    ts, dims = [], []
    d = 0
    for i in indices:
        if i is None:
            d += 1
            continue
        if not isinstance(i, Tensor):
            from .creation import tensor
            i = tensor(i)
        if i._dtype not in _INDEX_DTYPES:
            raise IndexError(_BAD_INDEX)
        if i._dtype is D.bool or i._dtype is D.uint8:
            if i._data.ndim == 0:
                raise NotImplementedError("index_put: a 0-d bool mask in `indices`")
            parts = _mask_to_indices(i if i._dtype is D.bool else i.bool(), self_shape, d)
            ts.extend(parts)
            dims.extend(range(d, d + len(parts)))
            d += len(parts)
            continue
        ts.append(i)
        dims.append(d)
        d += 1
    if d > len(self_shape):
        raise IndexError(f"too many indices for tensor of dimension {len(self_shape)} (got {d})")
    return ts, tuple(dims)


def index_put(input, indices, values, accumulate=False):
    ts, dims = _split_indices(input._data.shape, indices)
    _check_put_dtype(input, values)
    if not ts:
        return input.clone().copy_(values) if not accumulate else input + values
    return dispatch(INDEX_PUT, (input, ts, dims, values, bool(accumulate)))


def _check_put_dtype(input, values):
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not "
                        f"{type(values).__name__}")
    if values._dtype is not input._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{type_name(input._dtype)} for the destination and "
                           f"{type_name(values._dtype)} for the source.")


def index_put_(self, indices, values, accumulate=False):
    ts, dims = _split_indices(self._data.shape, indices)
    _check_put_dtype(self, values)
    return _put_(self, ts, dims, values, bool(accumulate))


def _put_(self, ts, dims, values, accumulate):
    """In-place index_put: write directly when nothing records, else commit via copy_."""
    if not ts:
        return self.add_(values) if accumulate else self.copy_(values)
    if not STATE.modes and not (STATE.grad_enabled and (self._rg or values._rg)):
        try:
            _put_into(self._data, ts, dims, values._data, accumulate)
        except (IndexError, ValueError) as e:
            _index_put_meta(self, ts, dims, values, accumulate)
            raise RuntimeError(f"index_put_: {e}") from e
        self._storage.version += 1
        return self
    return inplace(INDEX_PUT, self, (self, ts, dims, values, accumulate))


# ----------------------------------------------------------------- __getitem__ / setitem

def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _treat_as_tuple(seq):
    """PyTorch (like old NumPy) reads a short list holding slices/sequences as a tuple."""
    if len(seq) >= 32:
        return False
    for x in seq:
        if x is None or x is Ellipsis or isinstance(x, (slice, Tensor, list, tuple)):
            return True
    return False


def _normalize_key(key):
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and _treat_as_tuple(key):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq].", UserWarning, stacklevel=3)
        return tuple(key)
    return (key,)


def _as_index_tensor(x):
    from .creation import tensor
    if isinstance(x, np.ndarray):
        return tensor(x)
    t = tensor(x)
    if t._data.size == 0 and t._dtype.is_floating_point:
        return t.long()
    return t


def _consumed(item):
    if item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)):
        return 0
    if isinstance(item, Tensor) and item._dtype in (D.bool, D.uint8):
        return item._data.ndim
    return 1


def _bad_item(item):
    if isinstance(item, str):
        raise TypeError("new(): invalid data type 'str'")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {type(item).__name__})")


def _apply_basic(self, key):
    """Apply ints/slices/None/Ellipsis as views; return (view, adv tensors, adv dims)."""
    # sequences inside the key (lists, ranges, nested tuples, arrays) index as tensors
    items = [(_as_index_tensor(list(x) if isinstance(x, (range, tuple)) else x)
              if isinstance(x, (list, np.ndarray, range, tuple)) else x)
             for x in _normalize_key(key)]
    ndim = self._data.ndim
    used = sum(_consumed(x) for x in items)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    res = self
    d = real = 0
    ts, dims = [], []
    seen_ellipsis = False
    for x in items:
        if _is_int(x) or (isinstance(x, Tensor) and x._data.ndim == 0 and
                          x._dtype._kind == 1 and x._dtype is not D.uint8):
            i = int(x)
            n = res._data.shape[d]
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for dimension {real} with size {n}")
            res = dispatch(S.SELECT, (res, d, i))   # negative i: select wraps it (symbolic sizes)
            real += 1
        elif isinstance(x, slice):
            n = res._data.shape[d] if res._sym_shape is None else res._sym_shape[d]
            step = 1 if x.step is None else int(x.step)
            start, end = S._slice_bounds(n, x.start, x.stop, step)
            if not (start == 0 and end == n and step == 1):
                res = dispatch(S.SLICE, (res, d, start, end, step))
            d += 1
            real += 1
        elif x is None:
            res = dispatch(S.UNSQUEEZE, (res, d))
            d += 1
        elif x is Ellipsis:
            if not seen_ellipsis:
                skip = ndim - used
                d += skip
                real += skip
            seen_ellipsis = True
        elif isinstance(x, (bool, np.bool_)) or (isinstance(x, Tensor) and x._data.ndim == 0
                                                  and x._dtype in (D.bool, D.uint8)):
            res = dispatch(S.UNSQUEEZE, (res, d))
            ts.append(_bool_scalar_index(bool(x)))
            dims.append(d)
            d += 1
        elif isinstance(x, Tensor):
            if x._dtype not in _INDEX_DTYPES:
                raise IndexError(_BAD_INDEX)
            if x._dtype in (D.bool, D.uint8):
                parts = _mask_to_indices(x if x._dtype is D.bool else x.bool(),
                                         res._data.shape, d)
                ts.extend(parts)
                dims.extend(range(d, d + len(parts)))
                d += len(parts)
                real += len(parts)
            else:
                ts.append(x)
                dims.append(d)
                d += 1
                real += 1
        else:
            _bad_item(x)
    return res, ts, tuple(dims)


def _bool_scalar_index(flag):
    from .creation import zeros
    return zeros(1 if flag else 0, dtype=D.int64)


def __getitem__(self, key):
    if _is_int(key) and self._data.ndim:
        n = self._data.shape[0]
        if key < -n or key >= n:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {n}")
        return dispatch(S.SELECT, (self, 0, key))
    res, ts, dims = _apply_basic(self, key)
    if ts:
        return dispatch(INDEX, (res, ts, dims))
    if res is self:
        return dispatch(S.VIEW, (self, self._data.shape))
    return res


def _strip_leading_ones(value, ndim):
    """PyTorch drops a value's leading size-1 dims beyond the target's rank."""
    shape = value._data.shape
    k = 0
    while len(shape) - k > ndim and shape[k] == 1:
        k += 1
    return S.reshape(value, shape[k:]) if k else value


def __setitem__(self, key, value):
    res, ts, dims = _apply_basic(self, key)
    if isinstance(value, Tensor):
        value = _strip_leading_ones(value, res._data.ndim if not ts else 0)
        if ts:
            _check_put_dtype(res, value)     # PyTorch casts only for basic indexing
    elif ts:
        value = _const(value, res._dtype)
    if not ts:
        if isinstance(value, Tensor) and value._data.shape != res._data.shape:
            value = S.expand(value, res._data.shape)    # so copy_'s grad keeps value's shape
        res.copy_(value)
        return
    _put_(res, ts, dims, value, False)


# --------------------------------------------------------------- gather / scatter family

def _along_key(index, dim):
    """A NumPy index addressing, for each position of `index`, element index[...] on `dim`."""
    nd = index.ndim
    key = []
    for d in range(nd):
        if d == dim:
            key.append(index)
        else:
            shp = [1] * nd
            shp[d] = index.shape[d]
            key.append(np.arange(index.shape[d]).reshape(shp))
    return tuple(key)


def _check_bounds(index, n, dim):
    if index.size:
        bad = index[(index < 0) | (index >= n)]
        if bad.size:
            raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension "
                               f"{dim} with size {n}")


def _gather_kernel(a, dim, index, sparse_grad=False):
    if index.size == 0:                          # no shape rule applies to an empty index
        return np.empty(index.shape, a.dtype)
    if a.ndim == 0:
        a = a.reshape(1)
    idx = index.reshape(1) if index.ndim == 0 else index
    _check_bounds(idx, a.shape[dim], dim)
    return a[_along_key(idx, dim)].reshape(index.shape)


def _gather_vjp(ctx, g):
    _, dim, index, _ = ctx.args
    z = _zeros(ctx.shapes[0], g.dtype)
    return dispatch(SCATTER_ADD, (z, dim, index, g)), None, None, None


def _gather_meta(self, dim, index, sparse_grad=False):
    _check_gather_like("gather", self, dim, index)
    _check_bounds(index._data.reshape(-1), (self.shape or (1,))[dim], dim)
    return tuple(index.shape), self.dtype


GATHER = register("gather", _gather_kernel, save=(1, 2), vjp=_gather_vjp, meta=_gather_meta,
                  tags=("prim", "gather"),
                  schema="gather(Tensor self, int dim, Tensor index, *, "
                         "bool sparse_grad=False) -> Tensor")


def _check_gather_like(opname, self, dim, index, src=None):
    """PyTorch's argument checks shared by gather and scatter; returns the wrapped dim."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{opname}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    d = _wrap_dim(dim, self._data.ndim, opname)
    if index._dtype is not D.int64 and index._dtype is not D.int32 and \
            (index._data.size or opname != "gather"):     # an empty gather index: any dtype
        raise RuntimeError(f"{opname}(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor) and src._dtype is not self._dtype:
        raise RuntimeError(f"{opname}(): Expected self.dtype to be equal to src.dtype")
    si, ss = index._data.shape or (1,), self._data.shape or (1,)
    if index._data.size == 0:
        return d
    if len(si) != len(ss):
        what = "input" if opname == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")
    if isinstance(src, Tensor) and len(si) != len(src._data.shape or (1,)):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    for k in range(len(si)):
        if k != d and si[k] > ss[k]:
            if opname == "gather":
                raise RuntimeError(f"Size does not match at dimension {k} expected index "
                                   f"{list(index.shape)} to be no larger than self "
                                   f"{list(self.shape)} apart from dimension {d}")
            break
        if isinstance(src, Tensor) and si[k] > (src._data.shape or (1,))[k]:
            break
    else:
        return d
    raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                       f"{list(self.shape)} apart from dimension {d}"
                       + (f" and to be no larger size than src {list(src.shape)}"
                          if isinstance(src, Tensor) else ""))


def gather(input, dim, index, *, sparse_grad=False, out=None):
    d = _check_gather_like("gather", input, dim, index)
    res = dispatch(GATHER, (input, d, index, sparse_grad))
    return res if out is None else write_out(out, res, "gather")


def _scatter_kernel(a, dim, index, src, reduce=None):
    out = np.array(a, copy=True)
    view = out.reshape(1) if out.ndim == 0 else out
    idx = index.reshape(1) if index.ndim == 0 else index
    if not idx.size:
        return out
    _check_bounds(idx, view.shape[dim], dim)
    key = _along_key(idx, dim)
    if isinstance(src, np.ndarray):
        s = src.reshape(1) if src.ndim == 0 else src
        vals = s[tuple(slice(0, n) for n in idx.shape)]
    else:
        vals = np.asarray(src).astype(out.dtype)
    if reduce is None:
        view[key] = vals
    elif reduce == "add":
        np.add.at(view, key, np.broadcast_to(vals, idx.shape))
    else:
        np.multiply.at(view, key, np.broadcast_to(vals, idx.shape))
    return out


def _pad_to(g, shape):
    """Zero-pad g at the end of each dim up to `shape` (index smaller than src)."""
    for d, n in enumerate(shape):
        have = g._data.shape[d]
        if have < n:
            extra = list(g._data.shape)
            extra[d] = n - have
            g = S.cat([g, _zeros(tuple(extra), g.dtype)], d)
    return g


def _src_grad(ctx, g):
    _, dim, index = ctx.args[:3]
    if not ctx.needs_input_grad[3]:
        return None
    return _pad_to(dispatch(GATHER, (g, dim, index, False)), ctx.shapes[2])


def _scatter_vjp(ctx, g):
    _, dim, index, _, reduce = ctx.args
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter with reduce is not implemented")
    gs = dispatch(SCATTER, (g, dim, index, 0, None)) if ctx.needs_input_grad[0] else None
    return gs, None, None, _src_grad(ctx, g), None


def _scatter_meta(opname):
    def meta(self, dim, index, src, reduce=None):
        if reduce not in _REDUCE_MODES:
            raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce!r}")
        _check_gather_like(opname, self, dim, index, src)
        _check_bounds(index._data.reshape(-1), (self.shape or (1,))[dim], dim)
        return tuple(self.shape), self.dtype
    return meta


SCATTER = register("scatter", _scatter_kernel, save=(1, 2, 4), vjp=_scatter_vjp,
                   meta=_scatter_meta("scatter"), tags=("prim", "scatter", "nondeterministic"),
                   schema="scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, "
                          "str? reduce=None) -> Tensor")
SCATTER_ADD = register("scatter_add", lambda a, dim, index, src: _scatter_kernel(
    a, dim, index, src, "add"), save=(1, 2), meta=_scatter_meta("scatter_add"),
    tags=("prim", "scatter", "nondeterministic"),
    vjp=lambda ctx, g: (g, None, None, _src_grad(ctx, g)),
                       schema="scatter_add(Tensor self, int dim, Tensor index, "
                              "Tensor src) -> Tensor")

_REDUCE_MODES = {None: None, "add": "add", "multiply": "multiply"}


def _scatter_args(opname, self, dim, index, src, value, reduce):
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{opname}() missing required argument 'src' or 'value'")
    if reduce not in _REDUCE_MODES:
        raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce!r}")
    d = _check_gather_like(opname, self, dim, index, src)
    return d, src


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    d, src = _scatter_args("scatter", input, dim, index, src, value, reduce)
    res = dispatch(SCATTER, (input, d, index, src, reduce))
    return res if out is None else write_out(out, res, "scatter")


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    d, src = _scatter_args("scatter_", self, dim, index, src, value, reduce)
    return inplace(SCATTER, self, (self, d, index, src, reduce))


def scatter_add(input, dim, index, src, *, out=None):
    d = _check_gather_like("scatter_add", input, dim, index, src)
    res = dispatch(SCATTER_ADD, (input, d, index, src))
    return res if out is None else write_out(out, res, "scatter_add")


def scatter_add_(self, dim, index, src):
    d = _check_gather_like("scatter_add_", self, dim, index, src)
    return inplace(SCATTER_ADD, self, (self, d, index, src))


def _index_select_kernel(a, dim, index):
    scalar = a.ndim == 0
    if scalar:
        a = a.reshape(1)
    r = np.take(a, index.reshape(-1), axis=dim)
    return r.reshape(()) if scalar else r


def _index_select_vjp(ctx, g):
    _, dim, index = ctx.args
    return index_add(_zeros(ctx.shapes[0], g.dtype), dim, index, g), None, None


def _check_range(self, dim, index, message):
    """PyTorch's IndexError for an index value out of range (the values only real
    tensors have: meta and fake ones hold zeros)."""
    n = (self._data.shape or (1,))[dim]
    idx = index._data.reshape(-1)
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(message.format(index=int(bad[0]), dim=dim, size=n))


def _index_select_meta(self, dim, index):
    _check_index_vector("index_select", index)
    _check_range(self, dim, index, "index out of range in self")
    if not self.dim():
        return (), self.dtype
    return S._replace_dim(self.shape, dim, index.numel()), self.dtype


INDEX_SELECT = register("index_select", _index_select_kernel, save=(1, 2), vjp=_index_select_vjp,
                        meta=_index_select_meta, tags=("prim", "gather"),
                        schema="index_select(Tensor self, int dim, Tensor index) -> Tensor")


def _check_index_vector(opname, index, long_only=False):
    if not isinstance(index, Tensor):
        raise TypeError(f"{opname}(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._data.ndim > 1:
        raise IndexError(f"{opname}(): Index is supposed to be a vector")
    if long_only and index._dtype is not D.int64:
        raise IndexError(f"{opname}(): Expected dtype int64 for index.")
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{opname}(): Expected dtype int32 or int64 for index")


def index_select(input, dim, index, *, out=None):
    _check_index_vector("index_select", index)
    if index._data.size and index._data.min() < 0:     # NumPy's take would wrap around
        raise IndexError("index out of range in self")      # PyTorch's exact message
    d = _wrap_dim(dim, input._data.ndim, "index_select")
    res = dispatch(INDEX_SELECT, (input, d, index))
    return res if out is None else write_out(out, res, "index_select")


def _index_add_kernel(a, dim, index, source, alpha=1):
    out = np.array(a, copy=True)
    view = out.reshape(1) if out.ndim == 0 else out
    src = source.reshape(1) if source.ndim == 0 else source
    idx = index.reshape(-1)
    if alpha != 1:
        src = src * alpha
    np.add.at(np.moveaxis(view, dim, 0), idx, np.moveaxis(src, dim, 0).astype(out.dtype))
    return out


def _index_add_vjp(ctx, g):
    _, dim, index, _, alpha = ctx.args
    gs = g if ctx.needs_input_grad[0] else None
    gsrc = None
    if ctx.needs_input_grad[3]:
        gsrc = dispatch(INDEX_SELECT, (g, dim, index))
        gsrc = gsrc if alpha == 1 else gsrc * alpha
    return gs, None, None, gsrc, None


def _index_add_meta(self, dim, index, source, alpha=1):
    _check_index_add(self, dim, index, source)
    _check_range(self, dim, index, "index out of range in self")
    return tuple(self.shape), self.dtype


def _along(index, dim, like):
    """index (1-d) laid along `dim` and expanded to `like`'s shape, for scatter/gather."""
    from .. import _prims as P
    if like.dim() == 0:
        return P.view(index, [])
    shape = [1] * like.dim()
    shape[dim % like.dim()] = -1
    return P.expand(P.view(index, shape), list(like.shape))


def _index_add_decomp(x, dim, index, source, alpha=1):
    """scatter_add of alpha * source at index laid along dim."""
    from .. import _prims as P
    src = source if alpha == 1 else P.mul(source, alpha)
    return P.scatter_add(x, dim, _along(index, dim, src), src)


INDEX_ADD = register("index_add", _index_add_kernel, save=(1, 2, 4), vjp=_index_add_vjp,
                     meta=_index_add_meta, tags=("scatter", "nondeterministic"),
                     decomp=_index_add_decomp,
                     schema="index_add(Tensor self, int dim, Tensor index, Tensor source, *, "
                            "Scalar alpha=1) -> Tensor")


def _check_index_add(self, dim, index, source):
    _check_index_vector("index_add", index)
    d = _wrap_dim(dim, self._data.ndim, "index_add")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"index_add_(): self ({type_name(self._dtype)}) and source "
                           f"({type_name(source._dtype)}) must have the same scalar type")
    n = index._data.size
    ss = list(source._data.shape) or [1]
    if (source._data.ndim or 1) != (self._data.ndim or 1) or ss[d] != n:
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ss[d] if d < len(ss) else 1}), for dim: {d}")
    return d


def index_add(input, dim, index, source, *, alpha=1, out=None):
    d = _check_index_add(input, dim, index, source)
    res = dispatch(INDEX_ADD, (input, d, index, source, alpha))
    return res if out is None else write_out(out, res, "index_add")


def index_add_(self, dim, index, source, *, alpha=1):
    d = _check_index_add(self, dim, index, source)
    return inplace(INDEX_ADD, self, (self, d, index, source, alpha))


def _index_fill_kernel(a, dim, index, value):
    out = np.array(a, copy=True)
    view = out.reshape(1) if out.ndim == 0 else out
    np.moveaxis(view, dim, 0)[index.reshape(-1)] = np.asarray(value).astype(out.dtype)
    return out


def _index_fill_vjp(ctx, g):
    _, dim, index, value = ctx.args
    gs = dispatch(INDEX_FILL, (g, dim, index, 0)) if ctx.needs_input_grad[0] else None
    gv = None
    if ctx.needs_input_grad[3]:
        gv = (g - dispatch(INDEX_FILL, (g, dim, index, 0))).sum()   # each index once
    return gs, None, None, gv


def _index_fill_meta(self, dim, index, value):
    _check_index_fill(index, value)
    _check_range(self, dim, index, "index {index} is out of bounds for dimension {dim} with "
                 "size {size}")
    return tuple(self.shape), self.dtype


def _check_index_fill(index, value):
    _check_index_vector("index_fill_", index, long_only=True)
    if isinstance(value, Tensor) and value._data.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")


def _index_fill_decomp(x, dim, index, value):
    """where(position along dim is in index, value, x): the mask from iota == index."""
    from .. import _prims as P
    nd = max(x.dim(), 1)
    dim = dim % nd
    n = x.shape[dim] if x.dim() else 1
    idx = P.remainder(P.view(index, [-1]), n)
    hit = P.any(P.eq(P.unsqueeze(P.arange(0, 1, n, D.int64), 1), P.unsqueeze(idx, 0)), 1, False)
    if x.dim():
        hit = P.view(hit, [n if i == dim else 1 for i in range(nd)])
    else:
        hit = P.view(hit, [])
    return P.where(hit, _fill_value(value, x.dtype), x)


INDEX_FILL = register("index_fill", _index_fill_kernel, save=(1, 2), vjp=_index_fill_vjp,
                      meta=_index_fill_meta, tags=("scatter",), decomp=_index_fill_decomp,
                      schema="index_fill.int_Tensor(Tensor self, int dim, Tensor index, "
                             "Tensor value) -> Tensor")


def index_fill(input, dim, index, value):
    _check_index_fill(index, value)
    d = _wrap_dim(dim, input._data.ndim, "index_fill")
    return dispatch(INDEX_FILL, (input, d, index, value))


def index_fill_(self, dim, index, value):
    _check_index_fill(index, value)
    d = _wrap_dim(dim, self._data.ndim, "index_fill_")
    return inplace(INDEX_FILL, self, (self, d, index, value))


def take(input, index):
    """Index the flattened input (an advanced index, so gradients come for free)."""
    if index._dtype is not D.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{type_name(index._dtype)}")
    flat = S.reshape(input, (-1,))
    n = flat._data.shape[0]
    arr = index._data
    if arr.size and (arr.min() < -n or arr.max() >= n):
        raise IndexError(f"out of range: tried to access index "
                         f"{int(arr[(arr < -n) | (arr >= n)][0])} on a tensor of {n} elements.")
    return dispatch(INDEX, (flat, [index], (0,)))


export(__all__, index_put, index_put_, gather, scatter, scatter_add, index_select, index_add,
       index_fill, take)


def _make_methods():
    METHODS["__getitem__"] = __getitem__
    METHODS["__setitem__"] = __setitem__
    METHODS["index_put"] = index_put
    METHODS["index_put_"] = index_put_
    METHODS["gather"] = gather
    METHODS["scatter"] = scatter
    METHODS["scatter_"] = scatter_
    METHODS["scatter_add"] = scatter_add
    METHODS["scatter_add_"] = scatter_add_
    METHODS["index_select"] = index_select
    METHODS["index_add"] = index_add
    METHODS["index_add_"] = index_add_
    METHODS["index_fill"] = index_fill
    METHODS["index_fill_"] = index_fill_
    METHODS["take"] = take


_make_methods()
