"""View and shape ops: results alias the input's storage wherever PyTorch's do.

Note: view kernels return NumPy views (`view=True` ops), so `wrap_view` gives the
output the input's storage and version counter. `view` refuses shapes that need a
copy (PyTorch's error); `reshape` copies only then.
"""
import numpy as np

from .._dispatch import dispatch
from .._symbolic import SymInt
from .._tensor import Tensor, Size, _wrap_dim
from ._elementwise import type_name
from ._registry import register, export

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def _shape_arg(shape, numel, opname):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Size)):
        shape = tuple(shape[0])
    known = 1
    for s in shape:                 # the common case: plain non-negative ints, no -1
        if s.__class__ is not int or s < 0:
            break
        known *= s
    else:
        mismatch = known != numel      # (a symbolic numel records this guard, as below)
        if not mismatch:
            return shape
    for i, s in enumerate(shape):
        if isinstance(s, bool) or not hasattr(s, "__index__") or \
                (isinstance(s, Tensor) and s.dtype.is_floating_point):
            raise TypeError(f"{opname}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {i}")
    shape = tuple(s if isinstance(s, SymInt) else int(s) for s in shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_kernel(a, shape):
    try:
        return a.reshape(shape, copy=False)     # raises instead of copying
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


def _view_meta(a, shape):
    """The numel check (strides are the kernel's business: views run it under fake mode)."""
    return _shape_arg(tuple(shape), a.numel(), "view"), a.dtype


VIEW = register("view", _view_kernel, view=True, save=(), meta=_view_meta,
                vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None),
                schema="view(Tensor(a) self, SymInt[] size) -> Tensor(a)", tags=("prim",))
RESHAPE_COPY = register("_reshape_copy", lambda a, shape: np.reshape(a, shape).copy(),
                        save=(), meta=_view_meta, tags=("prim", "shape", "copy"),
                        vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None),
                        schema="_reshape_copy(Tensor self, SymInt[] size) -> Tensor")


def _view_dtype(self, dtype):
    from .. import _dtype as D
    if not isinstance(dtype, D.dtype):
        raise TypeError("view(): argument 'dtype' must be torch.dtype")
    from .._tensor import wrap_view
    a = self._data
    if dtype.itemsize != self._dtype.itemsize:
        _check_view_dtype(self, dtype)
    t = wrap_view(a.view(dtype.np), self)
    t._dtype = dtype
    return t


def _check_view_dtype(self, dtype):
    """PyTorch's rules for viewing as a dtype of another element size."""
    what = f"to view {type_name(self._dtype)} as {type_name(dtype)} (different element sizes)"
    if self._data.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if self.stride(-1) != 1 and self._data.shape[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
    sizes = (dtype.itemsize, self._dtype.itemsize)
    big, small = max(sizes), min(sizes)
    ratio = big // small
    if dtype.itemsize > self._dtype.itemsize:
        if self._data.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                               f"{self._data.shape[-1]}")
        if self.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                               f"but got {self.storage_offset()}")
        for d, st in enumerate(self.stride()[:-1]):
            if st % ratio:
                raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, "
                                   f"but got {st}")




def view(self, *shape):
    from .. import _dtype as D
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(self, shape[0])
    shape = _shape_arg(shape, self.numel(), "view")
    return dispatch(VIEW, (self, shape))


def reshape(input, *shape):
    shape = _shape_arg(shape, input.numel(), "reshape")
    a = input._data
    if input._backend == "cpu" and (a.flags.c_contiguous or shape == a.shape):
        return dispatch(VIEW, (input, shape))       # a view for sure
    if shape == tuple(input.shape):
        return dispatch(VIEW, (input, shape))
    if input._backend == "meta":     # meta: its strides decide, as a real tensor's do
        from ._meta_layout import view_probe
        a = view_probe(input)[0]
    try:
        np.reshape(a, shape, copy=False)
    except ValueError:
        return dispatch(RESHAPE_COPY, (input, shape))
    return dispatch(VIEW, (input, shape))


def _expand_kernel(a, shape):
    if a.flags.c_contiguous and a.size:    # the strides by hand: 10x faster than NumPy's
        strides = _expand_strides(a, shape)
        if strides is not None:
            return np.ndarray(shape, a.dtype, a, 0, strides)    # a view; base is `a`
    b = np.broadcast_to(a, shape)          # validates; read-only, so rebuild writable
    return np.lib.stride_tricks.as_strided(a, b.shape, b.strides)


def _expand_strides(a, shape):
    """Byte strides of `a` broadcast to `shape` (0 on new and size-1 dims), or None
    when the shapes do not broadcast (NumPy then raises its error)."""
    lead = len(shape) - a.ndim
    if lead < 0:
        return None
    strides = [0] * lead
    for n, st, s in zip(a.shape, a.strides, shape[lead:]):
        if n == s:
            strides.append(st)
        elif n == 1 and s >= 0:
            strides.append(0)
        else:
            return None
    for s in shape[:lead]:
        if s < 0:
            return None
    return strides


def _expand_meta(a, shape):
    if len(shape) < a.dim():
        raise RuntimeError(f"expand(torch.{a.dtype.name}{{{list(a.shape)}}}, size={list(shape)}): "
                           f"the number of sizes provided ({len(shape)}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({a.dim()})")
    lead = len(shape) - a.dim()
    for i, n in enumerate(shape[:lead]):
        if n < 0:
            raise RuntimeError(f"The expanded size of the tensor ({n}) isn't allowed in a "
                               f"leading, non-existing dimension {i}")
    for i, n in enumerate(a.shape):
        if n != 1 and n != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match "
                               f"the existing size ({n}) at non-singleton dimension {lead + i}.  "
                               f"Target sizes: {list(shape)}.  Tensor sizes: {list(a.shape)}")
    return tuple(shape), a.dtype


EXPAND = register("expand", _expand_kernel, view=True, save=(), meta=_expand_meta,
                  vjp=lambda ctx, g: (g.sum_to_size(ctx.shapes[0]), None),
                  schema="expand(Tensor(a) self, SymInt[] size) -> Tensor(a)", tags=("prim",))


def expand(self, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    nd = self._data.ndim
    lead = len(sizes) - nd
    if lead < 0:
        _expand_meta(self, sizes)
    have = self._data.shape if self._sym_shape is None else self._sym_shape
    shape = tuple(have[i - lead] if s == -1 and i >= lead else
                  s if isinstance(s, SymInt) else int(s) for i, s in enumerate(sizes))
    return dispatch(EXPAND, (self, shape))


def expand_as(self, other):
    return expand(self, other.shape)


def _permute_vjp(ctx, g):
    dims = ctx.args[1]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv), None)


PERMUTE = register("permute", lambda a, dims: a.transpose(dims), view=True, save=(1,),
                   meta=lambda a, dims: (tuple(a.shape[d] for d in dims), a.dtype),
                   vjp=_permute_vjp,
                   schema="permute(Tensor(a) self, int[] dims) -> Tensor(a)", tags=("prim",))


def permute(input, *dims):
    if len(dims) == 1 and isinstance(dims[0], (list, tuple)):
        dims = tuple(dims[0])
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, n, "permute") for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dispatch(PERMUTE, (input, dims))


def transpose(input, dim0, dim1):
    n = input._data.ndim
    if n == 0:
        _wrap_dim(dim0, 0, "transpose"), _wrap_dim(dim1, 0, "transpose")
        return dispatch(PERMUTE, (input, ()))
    d0, d1 = _wrap_dim(dim0, n, "transpose"), _wrap_dim(dim1, n, "transpose")
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return dispatch(PERMUTE, (input, tuple(dims)))


def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    if input._data.ndim == 2:
        return transpose(input, 0, 1)
    return dispatch(PERMUTE, (input, tuple(range(input._data.ndim))))


def _squeeze_kernel(a, dims):
    return np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1))


def _squeeze_meta(a, dims):
    return tuple(n for d, n in enumerate(a.shape) if n != 1 or d not in dims), a.dtype


SQUEEZE = register("squeeze", _squeeze_kernel, view=True, save=(), meta=_squeeze_meta,
                   vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None),
                   schema="squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", tags=("prim",))


def squeeze(input, dim=None):
    n = input._data.ndim
    if dim is None:
        dims = tuple(range(n))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(_wrap_dim(d, n, "squeeze") for d in dim)
    else:
        dims = (_wrap_dim(dim, n, "squeeze"),)
    return dispatch(SQUEEZE, (input, dims if n else ()))


def _unsqueeze_meta(a, dim):
    shape = list(a.shape)
    shape.insert(dim, 1)
    return tuple(shape), a.dtype


UNSQUEEZE = register("unsqueeze", lambda a, dim: np.expand_dims(a, dim), view=True, save=(),
                     meta=_unsqueeze_meta, vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None),
                     schema="unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", tags=("prim",))


def unsqueeze(input, dim):
    return dispatch(UNSQUEEZE, (input, _wrap_dim(dim, input._data.ndim + 1, "unsqueeze")))


def flatten(input, start_dim=0, end_dim=-1):
    n = input._data.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, n, "flatten"), _wrap_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = tuple(input.shape)
    return reshape(input, shp[:s] + (-1 if 0 not in shp[s:e + 1] else 0,) + shp[e + 1:]) \
        if s != e else input


export(__all__, view, reshape, expand, expand_as, permute, transpose, t, squeeze, unsqueeze,
       flatten)


def _mT(self):
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1)


def _mH(self):
    """Conjugate transpose of the last two dims (a conj view of mT, as PyTorch)."""
    if self._data.ndim < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self._data.ndim}-D tensor.")
    return transpose(self, -2, -1).conj()


def _H(self):
    """Conjugate transpose of a matrix; 0-D tensors pass through (PyTorch warns there)."""
    nd = self._data.ndim
    if nd == 0:
        return self
    if nd != 2:
        hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{nd}-D tensor.{hint}")
    return transpose(self, 0, 1).conj()


def _make_methods():
    METHODS["view"] = view
    METHODS["reshape"] = reshape
    METHODS["view_as"] = lambda self, other: view(self, other.shape)
    METHODS["reshape_as"] = lambda self, other: reshape(self, other.shape)
    METHODS["expand"] = expand
    METHODS["expand_as"] = expand_as
    METHODS["permute"] = permute
    METHODS["transpose"] = transpose
    METHODS["swapaxes"] = transpose
    METHODS["swapdims"] = transpose
    METHODS["t"] = t
    METHODS["T"] = property(lambda self: permute(self, tuple(reversed(range(self._data.ndim)))))
    METHODS["mT"] = property(_mT)
    METHODS["mH"] = property(_mH)
    METHODS["H"] = property(_H)
    METHODS["adjoint"] = _mH
    METHODS["squeeze"] = squeeze
    METHODS["unsqueeze"] = unsqueeze
    METHODS["flatten"] = flatten


_make_methods()


# ------------------------------------------------------------ slice / select / narrow

def _zeros(shape, dtype):
    """Zeros for a vjp (mask and index_ops use it too); `zeros` is imported when called,
    so importing shape does not import creation."""
    from .creation import zeros
    return zeros(shape, dtype=dtype)


def _dim_key(ndim, dim, item):
    """A NumPy index that applies `item` at `dim` (Ellipsis keeps a 0-d result an array)."""
    return (slice(None),) * dim + (item, Ellipsis)


def _slice_kernel(a, dim, start, end, step):
    return a[_dim_key(a.ndim, dim, slice(start, end, step))]


def _slice_scatter_kernel(a, src, dim, start, end, step):
    out = np.array(a, copy=True)
    out[_dim_key(a.ndim, dim, slice(start, end, step))] = src
    return out


def _replace_dim(shape, dim, n):
    """shape with dim `dim` resized to n (dropped when n is None)."""
    shape = tuple(shape)
    return shape[:dim] + (() if n is None else (n,)) + shape[dim + 1:]


def _slice_meta(a, dim, start, end, step):
    if type(start) is int and type(end) is int:
        n = len(range(start, end, step))
    else:                   # symbolic bounds (clamped by _slice_bounds, so end >= start)
        n = (end - start + step - 1) // step
    return _replace_dim(a.shape, dim, n), a.dtype


SLICE = register("slice", _slice_kernel, view=True, save=(1, 2, 3, 4), meta=_slice_meta,
                 vjp=lambda ctx, g: (slice_scatter(_zeros(ctx.shapes[0], g.dtype), g,
                                                   *ctx.args[1:]), None, None, None, None),
                 schema="slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, "
                        "SymInt? end=None, SymInt step=1) -> Tensor(a)", tags=("prim",))


def _slice_scatter_vjp(ctx, g):
    _, _, dim, start, end, step = ctx.args
    ga = slice_scatter(g, _zeros(ctx.shapes[1], g.dtype), dim, start, end, step) \
        if ctx.needs_input_grad[0] else None
    gs = dispatch(SLICE, (g, dim, start, end, step)) if ctx.needs_input_grad[1] else None
    return ga, gs, None, None, None, None


def _check_scatter_src(src, want):
    """src must have exactly the shape of the region it is written into."""
    if tuple(src.shape) != tuple(want):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(want)}")


def _slice_scatter_meta(a, src, dim, start, end, step):
    _check_scatter_src(src, _slice_meta(a, dim, start, end, step)[0])
    return tuple(a.shape), a.dtype


SLICE_SCATTER = register("slice_scatter", _slice_scatter_kernel, save=(2, 3, 4, 5),
                         meta=_slice_scatter_meta, tags=("prim", "scatter"), vjp=_slice_scatter_vjp,
                         schema="slice_scatter(Tensor self, Tensor src, int dim=0, "
                                "SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor")


def _slice_bounds(n, start, end, step):
    """PyTorch's clamping of slice bounds (no error for out-of-range bounds)."""
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = 0 if start is None else start if isinstance(start, SymInt) else int(start)
    end = n if end is None else end if isinstance(end, SymInt) else int(end)
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return start, end


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    if input._data.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = _wrap_dim(dim, input._data.ndim, "slice_scatter")
    start, end = _slice_bounds(input._data.shape[d], start, end, step)
    _slice_scatter_meta(input, src, d, start, end, step)
    return dispatch(SLICE_SCATTER, (input, src, d, start, end, step))


def _slice(input, dim, start, end, step=1):
    start, end = _slice_bounds(input.shape[dim], start, end, step)
    return dispatch(SLICE, (input, dim, start, end, step))


def _select_kernel(a, dim, index):
    return a[_dim_key(a.ndim, dim, index)]


def _select_scatter_kernel(a, src, dim, index):
    out = np.array(a, copy=True)
    out[_dim_key(a.ndim, dim, index)] = src
    return out


def _select_meta(a, dim, index):
    _select_index(a, dim, index)
    return _replace_dim(a.shape, dim, None), a.dtype


SELECT = register("select", _select_kernel, view=True, save=(1, 2), meta=_select_meta,
                  vjp=lambda ctx, g: (select_scatter(_zeros(ctx.shapes[0], g.dtype), g,
                                                     *ctx.args[1:]), None, None),
                  tags=("prim",),
                  schema="select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")


def _select_scatter_vjp(ctx, g):
    _, _, dim, index = ctx.args
    ga = select_scatter(g, _zeros(ctx.shapes[1], g.dtype), dim, index) \
        if ctx.needs_input_grad[0] else None
    gs = dispatch(SELECT, (g, dim, index)) if ctx.needs_input_grad[1] else None
    return ga, gs, None, None


def _select_scatter_meta(a, src, dim, index):
    _check_scatter_src(src, _select_meta(a, dim, index)[0])
    return tuple(a.shape), a.dtype


SELECT_SCATTER = register("select_scatter", _select_scatter_kernel, save=(2, 3),
                          meta=_select_scatter_meta, tags=("prim", "scatter"),
                          vjp=_select_scatter_vjp,
                          schema="select_scatter(Tensor self, Tensor src, int dim, "
                                 "SymInt index) -> Tensor")


def _select_index(input, dim, index):
    n = input._data.shape[dim]
    index = int(index)
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return index + n if index < 0 else index


def select(input, dim, index):
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._data.ndim, "select")
    return dispatch(SELECT, (input, d, _select_index(input, d, index)))


def select_scatter(input, src, dim, index):
    if input._data.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._data.ndim, "select_scatter")
    index = _select_index(input, d, index)
    _select_scatter_meta(input, src, d, index)
    return dispatch(SELECT_SCATTER, (input, src, d, index))


def narrow(input, dim, start, length):
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._data.ndim, "narrow")
    n = input._data.shape[d]
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return dispatch(SLICE, (input, d, start, start + length, 1))


# --------------------------------------------------------- split / chunk / unbind

def _split_kernel(a, sizes, dim):
    out, off = [], 0
    for s in sizes:
        out.append(a[_dim_key(a.ndim, dim, slice(off, off + s))])
        off += s
    return tuple(out)


def _split_meta(a, sizes, dim):
    n = a.shape[dim]
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={list(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {dim}), but got split_sizes="
                           f"{list(sizes)}")
    return tuple((_replace_dim(a.shape, dim, s), a.dtype) for s in sizes)


def _split_decomp(a, sizes, dim=0):
    """Consecutive slices along dim."""
    from .. import _prims as P
    outs, start = [], 0
    for s in sizes:
        outs.append(P.slice(a, dim, start, start + s, 1))
        start += s
    return tuple(outs)


SPLIT = register("split_with_sizes", _split_kernel, view=True, save=(2,), meta=_split_meta,
                 decomp=_split_decomp,
                 vjp=lambda ctx, *gs: (_join().cat(list(gs), ctx.args[2]), None, None),
                 schema="split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, "
                        "int dim=0) -> Tensor(a)[]")


def split_with_sizes(input, split_sizes, dim=0):
    if input._data.ndim == 0:
        raise RuntimeError("split_with_sizes expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input._data.ndim, "split_with_sizes")
    # a symbolic size (capture) stays one: int() would bake its example value into graphs
    sizes = tuple(s if isinstance(s, SymInt) else int(s) for s in split_sizes)
    _split_meta(input, sizes, d)
    return dispatch(SPLIT, (input, sizes, d))


def split(tensor, split_size_or_sections, dim=0):
    """Views along `dim`: chunks of one size, or the given sizes."""
    if isinstance(split_size_or_sections, (list, tuple)):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    if tensor._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor._data.ndim, "split")
    s, n = int(split_size_or_sections), tensor._data.shape[d]
    if s < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
    if s == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    if n == 0:
        return dispatch(SPLIT, (tensor, (0,), d))
    sizes = (s,) * (n // s) + ((n % s,) if n % s else ())
    return dispatch(SPLIT, (tensor, sizes, d))


def chunk(input, chunks, dim=0):
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input._data.ndim, "chunk")
    n = input._data.shape[d]
    size = -(-n // chunks)
    if size == 0:
        return dispatch(SPLIT, (input, (0,) * chunks, d))
    return split(input, size, d)


def tensor_split(input, indices_or_sections, dim=0):
    """numpy.array_split: views (not multi-output) cut at indices or into n sections."""
    if input._data.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, input._data.ndim, "tensor_split")
    n = input._data.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios.tolist() if ios._data.ndim else int(ios.item())
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [int(i) for i in ios] + [n]
    else:
        k = int(ios)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(n, k)
        bounds = [0]
        for i in range(k):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    return tuple(_slice(input, d, bounds[i], max(bounds[i], bounds[i + 1]))
                 for i in range(len(bounds) - 1))


def _unbind_kernel(a, dim):
    return tuple(a[_dim_key(a.ndim, dim, i)] for i in range(a.shape[dim]))


def _unbind_decomp(a, dim=0):
    """One select per index along dim."""
    from .. import _prims as P
    return tuple(P.select(a, dim, i) for i in range(a.shape[dim]))


UNBIND = register("unbind", _unbind_kernel, view=True, save=(1,), decomp=_unbind_decomp,
                  meta=lambda a, dim: ((_replace_dim(a.shape, dim, None), a.dtype),) * a.shape[dim],
                  vjp=lambda ctx, *gs: (_join().stack(list(gs), ctx.args[1]), None),
                  schema="unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]")


def unbind(input, dim=0):
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return dispatch(UNBIND, (input, _wrap_dim(dim, input._data.ndim, "unbind")))


# --------------------------------------------------------- diagonal / unfold / movedim

def _diag_geometry(shape, strides, offset, d1, d2):
    """Shape/strides of the diagonal view, and its start offset in stride units."""
    n1, n2 = shape[d1], shape[d2]
    if offset >= 0:
        length, start = max(min(n1, n2 - offset), 0), offset * strides[d2]
    else:
        length, start = max(min(n1 + offset, n2), 0), -offset * strides[d1]
    if length == 0:
        start = 0
    keep = [i for i in range(len(shape)) if i not in (d1, d2)]
    return ([shape[i] for i in keep] + [length],
            [strides[i] for i in keep] + [strides[d1] + strides[d2]], start)


def _diagonal_kernel(a, offset, d1, d2):
    shape, strides, _ = _diag_geometry(a.shape, a.strides, offset, d1, d2)
    if shape[-1]:     # move the start pointer to the diagonal's first element
        a = a[_dim_key(a.ndim, d2, slice(offset, None))] if offset >= 0 else \
            a[_dim_key(a.ndim, d1, slice(-offset, None))]
    return np.lib.stride_tricks.as_strided(a, shape=tuple(shape), strides=tuple(strides))


def _diagonal_scatter_kernel(a, src, offset, d1, d2):
    out = np.array(a, copy=True)
    _diagonal_kernel(out, offset, d1, d2)[...] = src
    return out


def _diagonal_meta(a, offset, d1, d2):
    return tuple(_diag_geometry(tuple(a.shape), (0,) * a.dim(), offset, d1, d2)[0]), a.dtype


DIAGONAL = register("diagonal", _diagonal_kernel, view=True, save=(1, 2, 3), meta=_diagonal_meta,
                    vjp=lambda ctx, g: (diagonal_scatter(_zeros(ctx.shapes[0], g.dtype), g,
                                                         *ctx.args[1:]), None, None, None),
                    schema="diagonal(Tensor(a) self, int offset=0, int dim1=0, "
                           "int dim2=1) -> Tensor(a)", tags=("prim",))


def _diagonal_scatter_vjp(ctx, g):
    _, _, offset, d1, d2 = ctx.args
    ga = diagonal_scatter(g, _zeros(ctx.shapes[1], g.dtype), offset, d1, d2) \
        if ctx.needs_input_grad[0] else None
    gs = dispatch(DIAGONAL, (g, offset, d1, d2)) if ctx.needs_input_grad[1] else None
    return ga, gs, None, None, None


def _diagonal_scatter_meta(a, src, offset, d1, d2):
    _check_scatter_src(src, _diagonal_meta(a, offset, d1, d2)[0])
    return tuple(a.shape), a.dtype


DIAGONAL_SCATTER = register("diagonal_scatter", _diagonal_scatter_kernel, save=(2, 3, 4),
                            meta=_diagonal_scatter_meta, tags=("prim", "scatter"),
                            vjp=_diagonal_scatter_vjp,
                            schema="diagonal_scatter(Tensor self, Tensor src, int offset=0, "
                                   "int dim1=0, int dim2=1) -> Tensor")


def _diag_dims(input, dim1, dim2, opname):
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n, opname), _wrap_dim(dim2, n, opname)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = _diag_dims(input, dim1, dim2, "diagonal")
    return dispatch(DIAGONAL, (input, int(offset), d1, d2))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    d1, d2 = _diag_dims(input, dim1, dim2, "diagonal_scatter")
    _diagonal_scatter_meta(input, src, int(offset), d1, d2)
    return dispatch(DIAGONAL_SCATTER, (input, src, int(offset), d1, d2))


def _unfold_kernel(a, dim, size, step):
    if a.ndim == 0:
        return a.reshape(1)[:size]
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    st = a.strides
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _unfold_backward_kernel(g, input_sizes, dim, size, step):
    out = np.zeros(input_sizes, g.dtype)
    if not input_sizes:              # a 0-d input unfolds to at most one element
        return np.asarray(g.reshape(-1).sum(dtype=g.dtype))
    n = g.shape[dim]
    for k in range(size):
        out[_dim_key(len(input_sizes), dim, slice(k, k + step * (n - 1) + 1, step))] += g[..., k]
    return out


def _unfold_meta(a, dim, size, step):
    have = a.shape[dim] if a.dim() else 1
    if size > have:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {have} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if not a.dim():
        return (size,), a.dtype
    return _replace_dim(a.shape, dim, (have - size) // step + 1) + (size,), a.dtype


UNFOLD = register("unfold", _unfold_kernel, view=True, save=(1, 2, 3), meta=_unfold_meta,
                  vjp=lambda ctx, g: (dispatch(UNFOLD_BACKWARD, (g, ctx.shapes[0], *ctx.args[1:])),
                                      None, None, None),
                  tags=("prim",),
                  schema="unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)")
UNFOLD_BACKWARD = register(
    "unfold_backward", _unfold_backward_kernel, save=(2, 3, 4), tags=("prim", "scatter"),
    meta=lambda g, input_sizes, dim, size, step: (tuple(input_sizes), g.dtype),
    vjp=lambda ctx, g: (dispatch(UNFOLD, (g, *ctx.args[2:])), None, None, None, None),
                           schema="unfold_backward(Tensor grad_in, SymInt[] input_sizes, "
                                  "int dim, int size, int step) -> Tensor")


def unfold(self, dimension, size, step):
    d = _wrap_dim(dimension, self._data.ndim, "unfold")
    _unfold_meta(self, d, size, step)
    return dispatch(UNFOLD, (self, d, int(size), int(step)))


def movedim(input, source, destination):
    n = input._data.ndim
    if isinstance(source, int) != isinstance(destination, int):
        raise TypeError(f"movedim() received an invalid combination of arguments - got "
                        f"({type(source).__name__}, {type(destination).__name__})")
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(s, n, "movedim") for s in src]
    dst = [_wrap_dim(s, n, "movedim") for s in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return dispatch(PERMUTE, (input, tuple(order)))


def unflatten(input, dim, sizes):
    n = input._data.ndim
    d = _wrap_dim(dim, n, "unflatten")
    sizes = tuple(s if isinstance(s, SymInt) else int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    have = input.shape[d]             # Tensor.shape: symbolic under capture, unlike _data's
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if (-1 not in sizes and known != have) or (-1 in sizes and (known == 0 or have % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({have}) in the input tensor")
    shp = tuple(input.shape)
    return view(input, shp[:d] + sizes + shp[d + 1:])


moveaxis = movedim

export(__all__, slice_scatter, select, select_scatter, narrow, split, split_with_sizes, chunk,
       tensor_split, unbind, diagonal, diagonal_scatter, movedim, unflatten)
__all__ += ["moveaxis", "swapaxes", "swapdims"]

# cat/stack live in join.py, one layer up: join uses this module's views. Code that
# imports them from here (`from ember.ops.shape import cat`) gets them lazily (PEP 562),
# so this module imports nothing above it.
_JOIN = frozenset(("cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                   "atleast_1d", "atleast_2d", "atleast_3d"))


def _join():
    from . import join
    return join


def __getattr__(name):
    if name in _JOIN:
        return getattr(_join(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


swapaxes = swapdims = transpose


def _make_view_methods():
    METHODS["select"] = select
    METHODS["narrow"] = narrow
    METHODS["split"] = split
    METHODS["split_with_sizes"] = split_with_sizes
    METHODS["chunk"] = chunk
    METHODS["tensor_split"] = tensor_split
    METHODS["unbind"] = unbind
    METHODS["diagonal"] = diagonal
    METHODS["diagonal_scatter"] = diagonal_scatter
    METHODS["slice_scatter"] = slice_scatter
    METHODS["select_scatter"] = select_scatter
    METHODS["unfold"] = unfold
    METHODS["movedim"] = movedim
    METHODS["moveaxis"] = movedim
    METHODS["unflatten"] = unflatten


_make_view_methods()
