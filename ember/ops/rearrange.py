"""Rearranging ops: repeat/tile, flip/roll/rot90, triangles and diagonals, splits and
stacks, broadcasting, meshgrid and the combinatorial products.

Note: primitives (registry ops) are only the ops PyTorch itself runs as one kernel and
that NumPy does in one call: repeat, flip, roll, tril/triu, tril/triu_indices and the
index form of repeat_interleave. Everything else is a composition of existing ops, as
in ATen (rot90 = flip + transpose, diag_embed = diagonal_scatter into zeros,
repeat_interleave = expand or index_select, meshgrid = view + expand, ...), so its
gradient comes from the pieces and its results alias the input where PyTorch's do.
"""
import itertools
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, Size, _wrap_dim
from ._elementwise import inplace, write_out, type_name
from ._registry import register, export
from . import shape as S

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def _ints(args, opname, what="dims"):
    """Varargs or one sequence of ints -> a tuple of ints (PyTorch's IntArrayRef)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple, Size)):
        args = tuple(args[0])
    out = []
    for a in args:
        if isinstance(a, bool) or not hasattr(a, "__index__"):
            raise TypeError(f"{opname}(): argument '{what}' must be tuple of ints, but found "
                            f"element of type {type(a).__name__}")
        out.append(a.__index__())
    return tuple(out)


def _out(res, out, opname):
    return res if out is None else write_out(out, res, opname)


# ------------------------------------------------------------------- repeat / tile

def _repeat_check(ndim, repeats):
    if len(repeats) < ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")


def _repeat_shape(shape, repeats):
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    out = tuple(s * r for s, r in zip(padded, repeats))
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {list(out)}")
    return out


def _repeat_kernel(a, repeats):
    _repeat_check(a.ndim, repeats)        # np.tile would pad short repeats silently
    _repeat_shape(a.shape, repeats)
    return np.tile(a, repeats) if repeats else a.copy()


def _repeat_meta(a, repeats):
    _repeat_check(a.dim(), repeats)
    return _repeat_shape(a.shape, repeats), a.dtype


def _repeat_vjp(ctx, g):
    """Sum the copies: view the grad as (r0, s0, r1, s1, ...) and reduce the r dims."""
    repeats = ctx.args[1]
    if not repeats:
        return g, None
    shape = ctx.shapes[0]
    padded = (1,) * (len(repeats) - len(shape)) + tuple(shape)
    split = [n for rs in zip(repeats, padded) for n in rs]
    summed = g.reshape(split).sum(tuple(range(0, 2 * len(repeats), 2)))
    return summed.reshape(shape), None


def _repeat_decomp(a, repeats):
    """View as (1, s0, 1, s1, ...), expand to (r0, s0, r1, s1, ...), reshape (a copy)."""
    from .. import _prims as P
    lead = len(repeats) - a.dim()
    sizes = [1] * lead + list(a.shape)
    inter, final = [], []
    for r, s in zip(repeats, sizes):
        inter += [r, s]
        final.append(r * s)
    x = P.view(a, [n for s in sizes for n in (1, s)])
    return P._reshape_copy(P.expand(x, inter), final)


REPEAT = register("repeat", _repeat_kernel, save=(1,), meta=_repeat_meta, vjp=_repeat_vjp,
                  tags=("shape",), decomp=_repeat_decomp,
                  schema="repeat(Tensor self, SymInt[] repeats) -> Tensor")


def repeat(self, *sizes):
    """Tensor.repeat: tile the tensor `sizes[i]` times along each (leading-padded) dim."""
    reps = _ints(sizes, "repeat", "repeats")
    _repeat_check(self._data.ndim, reps)
    _repeat_shape(self._data.shape, reps)
    return dispatch(REPEAT, (self, reps))


def tile(input, dims):
    """torch.tile: like repeat, but a short `dims` is padded with leading ones."""
    if not isinstance(dims, (list, tuple, Size)):
        raise TypeError(f"tile(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    reps = _ints((tuple(dims),), "tile")
    n = input._data.ndim
    return repeat(input, (1,) * (n - len(reps)) + reps)


def _repeat_index_kernel(repeats, output_size=None):
    _check_repeats_tensor(repeats.ndim, D._FROM_NP[repeats.dtype])
    if repeats.size and repeats.min() < 0:
        raise RuntimeError("repeats can not be negative")
    out = np.repeat(np.arange(repeats.shape[0], dtype=repeats.dtype), repeats)
    if output_size is not None and out.shape[0] != output_size:
        raise RuntimeError("allocated size does not match required size")
    return out


def _check_repeats_tensor(ndim, dtype):
    if ndim != 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if dtype not in (D.int32, D.int64):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{type_name(dtype)}'")


def _repeat_index_meta(repeats, output_size=None):
    _check_repeats_tensor(repeats.dim(), repeats.dtype)
    if output_size is not None:
        return (int(output_size),), repeats.dtype
    from .indexing import _data_dependent
    _data_dependent("repeat_interleave", repeats)
    return (int(repeats._data.sum()),), repeats.dtype


# aten::repeat_interleave.Tensor: repeats -> the index of each output element
REPEAT_INDEX = register("repeat_interleave", _repeat_index_kernel, meta=_repeat_index_meta,
                        tags=("prim", "dynamic_output_shape"),
                        schema="repeat_interleave.Tensor(Tensor repeats, *, "
                               "SymInt? output_size=None) -> Tensor")


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element `repeats` times along `dim` (flattened when dim is None);
    `repeat_interleave(repeats)` alone gives the indices that do it."""
    if repeats is None:
        if not isinstance(input, Tensor):
            raise TypeError("repeat_interleave(): argument 'repeats' must be Tensor")
        if input._data.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return dispatch(REPEAT_INDEX, (input, output_size))
    x = input if dim is not None else S.flatten(input)
    d = _wrap_dim(0 if dim is None else dim, input._data.ndim, "repeat_interleave")
    if isinstance(repeats, Tensor) and (repeats._data.size != 1 or repeats._data.ndim > 1):
        return _repeat_interleave_tensor(x, repeats, d, output_size)
    r = int(repeats.item() if isinstance(repeats, Tensor) else repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    y = S.unsqueeze(x, d + 1)
    shape = list(y._data.shape)
    shape[d + 1] = r
    if output_size is not None and output_size != x._data.shape[d] * r:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{x._data.shape[d] * r} but got {output_size}")
    return S.flatten(S.expand(y, shape), d, d + 1)


def _repeat_interleave_tensor(x, repeats, d, output_size):
    if repeats._data.ndim != 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    n = x._data.shape[d]
    if repeats._data.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats._data.shape[0]} and input.size({d}) = "
                           f"{n}")
    from .indexing import index_select
    return index_select(x, d, dispatch(REPEAT_INDEX, (repeats, output_size)))


# ---------------------------------------------------------------- flip / roll / rot90

def _flip_dims(ndim, dims, opname="flip"):
    wrapped = tuple(_wrap_dim(d, ndim, opname) for d in dims)
    seen = set()
    for d in wrapped:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    return wrapped


def _flip_kernel(a, dims):
    return np.flip(a, dims).copy() if a.ndim else a.copy()


def _flip_meta(a, dims):
    _flip_dims(a.dim(), dims)
    return tuple(a.shape), a.dtype


def _flip_decomp(a, dims):
    """index_select with a descending iota along each flipped dim."""
    from .. import _prims as P
    for d in dims:
        n = a.shape[d]
        a = P.index_select(a, d, P.arange(n - 1, -1, n, D.int64))
    return a


FLIP = register("flip", _flip_kernel, save=(1,), tags=("shape",), meta=_flip_meta,
                decomp=_flip_decomp,
                vjp=lambda ctx, g: (dispatch(FLIP, (g, ctx.args[1])), None),
                schema="flip(Tensor self, int[] dims) -> Tensor")


def flip(input, dims):
    if not isinstance(dims, (list, tuple, Size)):
        raise TypeError(f"flip(): argument 'dims' (position 2) must be tuple of ints, not "
                        f"{type(dims).__name__}")
    return dispatch(FLIP, (input, _flip_dims(input._data.ndim, _ints((dims,), "flip"))))


def _flip_method(self, *dims):
    return flip(self, _ints(dims, "flip"))


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return dispatch(FLIP, (input, (1,)))


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return dispatch(FLIP, (input, (0,)))


def _roll_check(shifts, dims):
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")


def _roll_kernel(a, shifts, dims):
    _roll_check(shifts, dims)
    return np.roll(a, shifts, dims)


def _roll_meta(a, shifts, dims):
    _roll_check(shifts, dims)
    return tuple(a.shape), a.dtype


def _roll_decomp(a, shifts, dims):
    """Each dim: the last `shift` entries, then the rest (cat of two slices)."""
    for s, d in zip(shifts, dims):
        n = a.shape[d]
        s = s % n if n else 0
        if s:
            a = S.cat([S.narrow(a, d, n - s, s), S.narrow(a, d, 0, n - s)], d)
    return a


ROLL = register("roll", _roll_kernel, save=(1, 2), meta=_roll_meta, decomp=_roll_decomp,
                tags=("shape",),
                vjp=lambda ctx, g: (dispatch(ROLL, (g, tuple(-s for s in ctx.args[1]),
                                                    ctx.args[2])), None, None),
                schema="roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor")


def roll(input, shifts, dims=None):
    shifts = _ints((shifts,) if not isinstance(shifts, (list, tuple)) else (tuple(shifts),),
                   "roll", "shifts")
    dims = () if dims is None else _ints(
        (dims,) if not isinstance(dims, (list, tuple)) else (tuple(dims),), "roll")
    if not dims and len(shifts) == 1:        # roll the flattened tensor
        flat = S.flatten(input)
        return S.view(dispatch(ROLL, (flat, shifts, (0,))), input._data.shape)
    _roll_check(shifts, dims)
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dims = tuple(_wrap_dim(d, input._data.ndim, "roll") for d in dims)
    return dispatch(ROLL, (input, shifts, dims))


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees k times in the plane `dims`, from dims[0] towards dims[1]."""
    dims = _ints((dims,), "rot90")
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = (_wrap_dim(d, n, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = "
                           f"{dims[0]} and dim1 = {dims[1]}")
    k = int(k) % 4
    if k == 1:
        return S.transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return S.transpose(flip(input, (d0,)), d0, d1)
    from .copy import clone
    return clone(input)


# ------------------------------------------------------------------ tril / triu

def _tri_check(ndim, opname):
    if ndim < 2:
        raise RuntimeError(f"{opname}: input tensor must have at least 2 dimensions")


def _tri_decomp(lower):
    """where(col - row <= k (tril) or >= k (triu), a, 0), rows and cols from iota."""
    def decomp(a, diagonal=0):
        from .. import _prims as P
        r, c = a.shape[-2], a.shape[-1]
        diff = P.sub(P.unsqueeze(P.arange(0, 1, c, D.int64), 0),
                     P.unsqueeze(P.arange(0, 1, r, D.int64), 1))
        keep = P.le(diff, diagonal) if lower else P.ge(diff, diagonal)
        return P.where(keep, a, P.full((), 0, a.dtype))
    return decomp


def _tri_op(name, npfn):
    def kernel(a, diagonal):
        _tri_check(a.ndim, name)                 # np.tril would turn 1-d into 2-d
        return npfn(a, diagonal)

    def meta(a, diagonal):
        _tri_check(a.dim(), name)
        return tuple(a.shape), a.dtype

    op = register(name, kernel, save=(1,), meta=meta, tags=("shape",),
                  decomp=_tri_decomp(name == "tril"),
                  schema=f"{name}(Tensor self, SymInt diagonal=0) -> Tensor",
                  vjp=lambda ctx, g: (dispatch(op, (g, ctx.args[1])), None))
    return op


TRIL = _tri_op("tril", np.tril)
TRIU = _tri_op("triu", np.triu)


def _diag_arg(diagonal, opname):
    if isinstance(diagonal, bool) or not hasattr(diagonal, "__index__"):
        raise TypeError(f"{opname}(): argument 'diagonal' (position 2) must be int, not "
                        f"{type(diagonal).__name__}")
    return diagonal.__index__()


def tril(input, diagonal=0, *, out=None):
    _tri_check(input._data.ndim, "tril")
    return _out(dispatch(TRIL, (input, _diag_arg(diagonal, "tril"))), out, "tril")


def triu(input, diagonal=0, *, out=None):
    _tri_check(input._data.ndim, "triu")
    return _out(dispatch(TRIU, (input, _diag_arg(diagonal, "triu"))), out, "triu")


def _tril_(self, diagonal=0):
    _tri_check(self._data.ndim, "tril")
    return inplace(TRIL, self, (self, _diag_arg(diagonal, "tril")))


def _triu_(self, diagonal=0):
    _tri_check(self._data.ndim, "triu")
    return inplace(TRIU, self, (self, _diag_arg(diagonal, "triu")))


def _tri_count(row, col, offset, lower):
    """How many (i, j) of a row x col matrix lie on the lower (upper) side of `offset`."""
    if lower:
        return int(sum(max(0, min(col, i + offset + 1)) for i in range(row)))
    return row * col - _tri_count(row, col, offset - 1, True)


def _tri_indices_decomp(lower):
    """The k-th index pair: row = how many rows' counts the running total passes
    (searchsorted over the cumsum), col = the row's first column + the rest of k. Each
    row's first column and count come from iota; the total is static."""
    def decomp(row, col, offset, dtype):
        from .. import _prims as P
        r = P.arange(0, 1, row, D.int64)
        if lower:
            first = P.full([row], 0, D.int64)
            count = P.minimum(P.maximum(P.add(r, offset + 1), 0), col)
        else:
            first = P.minimum(P.maximum(P.add(r, offset), 0), col)
            count = P.sub(col, first)
        ends = P.cumsum(count, 0, None)
        k = P.arange(0, 1, _tri_count(row, col, offset, lower), D.int64)
        rows = P.searchsorted(ends, k, False, True, None, None)
        start = P.sub(P.index_select(ends, 0, rows), P.index_select(count, 0, rows))
        cols = P.add(P.sub(k, start), P.index_select(first, 0, rows))
        return P._to_copy(P.cat([P.unsqueeze(rows, 0), P.unsqueeze(cols, 0)], 0), dtype)
    return decomp


def _tri_indices_op(name, lower):
    def check(row, col, offset, dtype):
        for what, v in (("row", row), ("col", col)):
            if v < 0:
                raise RuntimeError(f"{what} must be non-negative, got{v}")
        if dtype not in (D.int32, D.int64):
            raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(dtype)}'")

    def kernel(row, col, offset, dtype):
        check(row, col, offset, dtype)
        fn = np.tril_indices if lower else np.triu_indices
        return np.stack(fn(row, offset, col)).astype(dtype.np).reshape(2, -1)

    def meta(row, col, offset, dtype):
        check(row, col, offset, dtype)
        return (2, _tri_count(row, col, offset, lower)), dtype

    return register(name, kernel, meta=meta, tags=("factory",), decomp=_tri_indices_decomp(lower),
                    schema=f"{name}(int row, int col, int offset=0, *, ScalarType dtype) "
                           "-> Tensor")


TRIL_INDICES = _tri_indices_op("tril_indices", True)
TRIU_INDICES = _tri_indices_op("triu_indices", False)


def _tri_indices(op, row, col, offset, dtype, device):
    from .creation import _factory, _finish
    dtype = D.int64 if dtype is None else dtype
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"{op.name}(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    args = (int(row), int(col), int(offset), dtype)
    return _finish(_factory(op, args, device), False, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(TRIL_INDICES, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(TRIU_INDICES, row, col, offset, dtype, device)


# ------------------------------------------------------------------- diagonals

def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Place the last dim of `input` on the (offset) diagonal of dims (dim1, dim2)."""
    n = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, n, "diag_embed"), _wrap_dim(dim2, n, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    size = input._data.shape[-1] + abs(offset)
    shape = list(input._data.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    from .creation import zeros
    return S.diagonal_scatter(zeros(shape, dtype=input.dtype), input, offset, d1, d2)


def diag(input, diagonal=0, *, out=None):
    """1-d: a matrix with input on a diagonal; 2-d: a copy of a diagonal."""
    n = input._data.ndim
    if n not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    diagonal = _diag_arg(diagonal, "diag")
    if n == 1:
        res = diag_embed(input, diagonal, 0, 1)
    else:
        from .copy import clone
        res = clone(S.diagonal(input, diagonal))
    return _out(res, out, "diag")


def diagflat(input, offset=0):
    return diag(S.flatten(input).contiguous(), offset)


# ----------------------------------------------------------------- splits and stacks

def _dir_split(name, min_dims, dim_of):
    def fn(input, indices_or_sections):
        n = input._data.ndim
        if n < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {n} dimensions!")
        d = dim_of(n)
        ios = indices_or_sections
        if isinstance(ios, Tensor) and ios._data.ndim == 0:
            ios = int(ios.item())
        if not isinstance(ios, (list, tuple, Tensor)):
            k, size = int(ios), input._data.shape[d]
            if k == 0 or size % k:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {size} is not divisible by the "
                                   f"split_size {k}!")
        return S.tensor_split(input, ios, d)
    fn.__name__ = name
    fn.__doc__ = f"torch.{name}: tensor_split on a fixed dim; int sections must divide it."
    return fn


hsplit = _dir_split("hsplit", 1, lambda n: 0 if n == 1 else 1)
vsplit = _dir_split("vsplit", 2, lambda n: 0)
dsplit = _dir_split("dsplit", 3, lambda n: 2)


def column_stack(tensors, *, out=None):
    if not isinstance(tensors, (list, tuple)) or len(tensors) == 0:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    cols = [S.reshape(t, (t._data.size, 1)) if t._data.ndim <= 1 else t for t in tensors]
    return S.hstack(cols, out=out)


def row_stack(tensors, *, out=None):
    return S.vstack(tensors, out=out)


# ------------------------------------------------------------------- broadcasting

def broadcast_shapes(*shapes):
    """The common shape of `shapes` (ints or sequences), without making tensors."""
    seqs = []
    for s in shapes:
        if s is None:
            continue
        if isinstance(s, Tensor) or not isinstance(s, (list, tuple, Size)):
            if isinstance(s, bool) or not hasattr(s, "__index__"):
                raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or "
                                   f"a list of ints, got {s}")
            s = (s,)
        seqs.append(tuple(s))
    for s in seqs:
        for v in s:
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item 0 is "
                                f"'{type(v).__name__}')")
    common = [1] * max((len(s) for s in seqs), default=0)
    for i, s in enumerate(seqs):
        for k in range(-1, -1 - len(s), -1):
            if s[k] == common[k]:
                continue
            if common[k] == 1:
                if s[k] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[k] = s[k]
            elif s[k] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[k]} at "
                                   f"{k}! Mismatching argument at index {i} had {s}; but expected "
                                   f"shape should be broadcastable to {common}")
    return Size(common)


def broadcast_to(input, size):
    return S.expand(input, tuple(size))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = []
    for i, t in enumerate(tensors):
        s = t._data.shape if t._sym_shape is None else t._sym_shape   # symbolic sizes
        if len(s) > len(shape):
            shape = [1] * (len(s) - len(shape)) + shape
        for k in range(-1, -1 - len(s), -1):
            if s[k] != shape[k] and s[k] != 1:
                if shape[k] != 1:
                    raise RuntimeError(
                        f"The size of tensor a ({shape[k]}) must match the size of tensor b "
                        f"({s[k]}) at non-singleton dimension {len(shape) + k}")
                shape[k] = s[k]
    return tuple(S.expand(t, tuple(shape)) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids as expanded views; indexing 'ij' (matrix) or 'xy' (Cartesian)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {list(t.shape)}")
        if t._dtype is not tensors[0]._dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t._data.size for t in ts)
    grids = []
    for i, t in enumerate(ts):
        vs = [1] * len(ts)
        vs[i] = -1
        grids.append(S.expand(S.reshape(t, tuple(vs)), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return S.stack([S.flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The r-length combinations of a 1-d tensor's elements, in itertools' order."""
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if isinstance(r, bool) or not hasattr(r, "__index__"):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    r = r.__index__()
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    from .creation import empty, tensor
    if r == 0:
        return empty((0,), dtype=input.dtype)
    gen = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    n = input._data.shape[0]
    idx = np.fromiter(itertools.chain.from_iterable(gen(range(n), r)), dtype=np.int64)
    from .indexing import index_select
    return S.reshape(index_select(input, 0, tensor(idx)), (-1, r))


export(__all__, tile, repeat_interleave, flip, fliplr, flipud, roll, rot90, tril, triu,
       tril_indices, triu_indices, diag, diag_embed, diagflat, hsplit, vsplit, dsplit,
       column_stack, row_stack, broadcast_shapes, broadcast_to, broadcast_tensors, meshgrid,
       cartesian_prod, combinations)


def _make_methods():
    METHODS["repeat"] = repeat
    METHODS["tile"] = lambda self, *dims: tile(self, _ints(dims, "tile"))
    METHODS["repeat_interleave"] = repeat_interleave
    METHODS["flip"] = _flip_method
    METHODS["fliplr"] = fliplr
    METHODS["flipud"] = flipud
    METHODS["roll"] = roll
    METHODS["rot90"] = rot90
    METHODS["tril"] = tril
    METHODS["triu"] = triu
    METHODS["tril_"] = _tril_
    METHODS["triu_"] = _triu_
    METHODS["diag"] = diag
    METHODS["diag_embed"] = diag_embed
    METHODS["diagflat"] = diagflat
    METHODS["hsplit"] = hsplit
    METHODS["vsplit"] = vsplit
    METHODS["dsplit"] = dsplit
    METHODS["broadcast_to"] = broadcast_to


_make_methods()
