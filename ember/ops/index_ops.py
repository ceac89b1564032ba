"""Index reductions and copies: take_along_dim, index_copy, index_reduce, scatter_reduce,
narrow_copy, the `*_copy` view variants, clone/contiguous memory formats, kron,
block_diag, cdist and trace.

Note: three new primitives (index_copy, index_reduce, scatter_reduce) write along a dim
with duplicates resolved as PyTorch's CPU kernels do (copy: last write wins; reductions
accumulate with NumPy's unbuffered `ufunc.at`). Their backward formulas are PyTorch's
(FunctionsManual.cpp index_reduce_backward / scatter_reduce_backward), written in ember
ops so double backward works. cdist keeps a direct kernel with a vjp (and a decomp);
everything else is a composite of existing ops, so autograd comes for free.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import inplace, write_out, type_name
from ._registry import register, export
from . import shape as S
from .shape import _zeros
from . import complex as C
from . import as_strided as AS
from . import indexing as I

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


def _ones_like(t):
    from .creation import ones_like
    return ones_like(t)


def _out(res, out, name):
    return res if out is None else write_out(out, res, name)


def _cpp(d):
    """PyTorch's ScalarType name (Float, Long, ...) used in its messages."""
    return type_name(d)


# ------------------------------------------------------------------ memory formats

class memory_format:
    """PyTorch's memory_format singletons (`ember.channels_last`, ...)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
__all__ += ["memory_format", "contiguous_format", "preserve_format", "channels_last",
            "channels_last_3d"]

_LAST_RANK = {"channels_last": 4, "channels_last_3d": 5}


def _channels_last_copy(a, name):
    """A copy of `a` whose memory is N(D)HWC, the logical shape kept."""
    rank = _LAST_RANK[name]
    if a.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    perm = (0,) + tuple(range(2, rank)) + (1,)
    back = (0, rank - 1) + tuple(range(1, rank - 1))
    return np.ascontiguousarray(np.transpose(a, perm)).transpose(back)


def clone_layout(a, fmt):
    """The clone kernel's layout rule: contiguous, channels_last[_3d], or (preserve_format)
    the input's stride order, as PyTorch's empty_like (NumPy's order='K')."""
    name = getattr(fmt, "name", None)
    if name in _LAST_RANK:
        return _channels_last_copy(a, name)
    if name == "contiguous_format":
        return np.array(a, copy=True, order="C")
    if name != "preserve_format":
        raise TypeError(f"clone(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    return np.array(a, copy=True, order="K")


# ------------------------------------------------------------------ take_along_dim

def take_along_dim(input, indices, dim=None, *, out=None):
    if dim is None:
        if indices._dtype is not D.int64:
            raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but "
                               f"got {_cpp(indices._dtype)}")
        flat = S.view(input, -1)
        return _out(I.gather(flat, 0, S.view(indices, -1)), out, "take_along_dim")
    if input._data.ndim != indices._data.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input._data.ndim} dimensions for "
                           f"input, and {indices._data.ndim} dimensions for indices")
    if indices._dtype is not D.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_cpp(indices._dtype)}")
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input._data.ndim, "take_along_dim")
    ishape, xshape = list(indices._data.shape), list(input._data.shape)
    idx = _broadcast(indices, S._replace_dim(xshape, d, ishape[d] if ishape else 1), ishape)
    src = _broadcast(input, S._replace_dim(ishape, d, xshape[d] if xshape else 1), xshape)
    # with a dim, PyTorch counts negative indices from the end (gather alone does not)
    idx = idx + (idx < 0).to(D.int64) * xshape[d]
    return _out(I.gather(src, d, idx), out, "take_along_dim")


def _broadcast(t, other, own):
    """t expanded to broadcast(own, other), with PyTorch's size-mismatch message."""
    shape = _infer_size(own, other)
    return t if tuple(shape) == tuple(own) else S.expand(t, shape)


def _infer_size(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


# ------------------------------------------------------------ shared reduction kernel

_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
          "amin": np.minimum}


def _identity(reduce, dt):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low = reduce == "amax"
    if dt.kind == "b":
        return not low
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min if low else info.max
    return -np.inf if low else np.inf


def _reduce_at(view, key, vals, reduce, include_self):
    """view[key] <reduce>= vals, duplicates accumulated; mean divides by the count
    (floor division for integers, as PyTorch does)."""
    if not include_self:
        view[key] = _identity(reduce, view.dtype)
    if reduce == "mean":
        count = np.full(view.shape, int(include_self), dtype=np.int64)
        np.add.at(count, key, 1)
        count[count == 0] = 1
    _UFUNC[reduce].at(view, key, vals)
    if reduce == "mean":
        if view.dtype.kind in "fc":
            view[...] = view / count
        else:
            view[...] = view // count


def _work_copy(a):
    """A writable copy, computed in float32 for half-precision types."""
    if a.dtype in (np.float16, D.bfloat16.np):
        return a.astype(np.float32)
    return np.array(a, copy=True)


def _as1d(a):
    return a.reshape(1) if a.ndim == 0 else a


# --------------------------------------------------------------------- index_copy

def _index_copy_kernel(a, dim, index, source):
    out = np.array(a, copy=True)
    view = np.moveaxis(_as1d(out), dim, 0)
    idx = index.reshape(-1)
    n = view.shape[0]
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad[0])} is out of bounds for dimension "
                         f"{dim} with size {n}")
    src = np.moveaxis(_as1d(source), dim, 0) if source.ndim else source.reshape(1)
    view[idx] = src.reshape((idx.size,) + view.shape[1:])
    return out


def _check_index_copy(self, dim, index, source, dtypes=True):
    d = _wrap_dim(dim, self._data.ndim, "index_copy")
    if index._data.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._data.ndim})")
    n, sd = index._data.size, source._data.ndim
    if sd == 0 and n != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {n})")
    if sd != self._data.ndim and sd and self._data.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({sd}), destination "
                         f"dimensionality ({self._data.ndim})")
    if index._dtype is not D.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_cpp(index._dtype)}")
    if dtypes and self._dtype is not source._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_cpp(self._dtype)} and (source) "
                           f"{_cpp(source._dtype)}")
    ss, cs = list(self._data.shape), list(source._data.shape)
    if ss:
        del ss[d]
    if cs:
        del cs[d]
    if ss != cs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {ss} at dimension {d} and source "
                           f"slice shape: {cs} at dimension 0.")
    if sd and n != source._data.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source._data.shape[d]})")
    return d


def _index_copy_meta(self, dim, index, source):
    _check_index_copy(self, dim, index, source)
    _check_nonneg(self, dim, index, "index_copy_(): index {index} is out of bounds for "
                  "dimension {dim} with size {size}")
    return tuple(self.shape), self.dtype


def _check_nonneg(self, dim, index, message):
    """IndexError for an index outside [0, size) (these ops refuse negative indices)."""
    n = (self._data.shape or (1,))[dim]
    idx = index._data.reshape(-1)
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise IndexError(message.format(index=int(bad[0]), dim=dim, size=n))


def _index_copy_vjp(ctx, g):
    _, dim, index, _ = ctx.args
    gs = I.index_fill(g, dim, index, 0) if ctx.needs_input_grad[0] else None
    gsrc = None
    if ctx.needs_input_grad[3]:
        gsrc = S.reshape(I.index_select(g, dim, index), ctx.shapes[2])
    return gs, None, None, gsrc


# autocast promotes index_copy's inputs (PyTorch's CPU list); check=True runs the meta,
# dtype check included, on the cast inputs
def _index_copy_decomp(x, dim, index, source):
    """scatter of source at index laid along dim."""
    from .. import _prims as P
    from .indexing import _along
    return P.scatter(x, dim, _along(index, dim, source), source, None)


INDEX_COPY = register("index_copy", _index_copy_kernel, meta=_index_copy_meta, save=(1, 2),
                      vjp=_index_copy_vjp, tags=("scatter", "nondeterministic"), check=True,
                      amp_policy="promote", decomp=_index_copy_decomp,
                      schema="index_copy(Tensor self, int dim, Tensor index, "
                             "Tensor source) -> Tensor")


def index_copy(input, dim, index, source, *, out=None):
    d = _check_index_copy(input, dim, index, source, dtypes=False)
    return _out(dispatch(INDEX_COPY, (input, d, index, source)), out, "index_copy")


def index_copy_(self, dim, index, source):
    d = _check_index_copy(self, dim, index, source)
    return inplace(INDEX_COPY, self, (self, d, index, source))


# ------------------------------------------------------------------- index_reduce

_INDEX_REDUCE = ("prod", "mean", "amax", "amin")
_warned_beta = []


def _index_reduce_kernel(a, dim, index, source, reduce, include_self):
    out = _work_copy(a)
    view = np.moveaxis(_as1d(out), dim, 0)
    idx = index.reshape(-1).astype(np.int64)
    n = view.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    src = np.moveaxis(_as1d(source), dim, 0).astype(out.dtype)
    _reduce_at(view, idx, src, reduce, include_self)
    return out.astype(a.dtype, copy=False)


def _check_index_reduce(self, dim, index, source, reduce):
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = _wrap_dim(dim, self._data.ndim, "index_reduce")
    if index._data.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index._data.ndim} with type: {_cpp(index._dtype)} and size: "
                         f"{list(index.shape)}")
    if index._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_cpp(index._dtype)}")
    if self._dtype is not source._dtype:
        raise RuntimeError(f"index_reduce_(): self ({_cpp(self._dtype)}) and source "
                           f"({_cpp(source._dtype)}) must have the same scalar type")
    n, ss = index._data.size, source._data.shape
    want = ss[d] if ss and d < len(ss) else 1
    if n != want or (source._data.ndim or 1) != (self._data.ndim or 1):
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({want}), for dim: {d}")
    for k in range(self._data.ndim):
        if k != d and ss and self._data.shape[k] != ss[k]:
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                               f"the specified dimension. Got self.shape = {list(self.shape)} "
                               f"source.shape = {list(source.shape)}")
    if not _warned_beta:
        _warned_beta.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    return d


def _index_reduce_meta(self, dim, index, source, reduce, include_self):
    _check_index_reduce(self, dim, index, source, reduce)
    _check_nonneg(self, dim, index, "index out of range in self")
    return tuple(self.shape), self.dtype


def _index_reduce_vjp(ctx, g):
    self, dim, index, source, reduce, include_self = ctx.args
    res = ctx.out
    pick = lambda t: I.index_select(t, dim, index)           # noqa: E731
    spread = lambda base, t: I.index_add(base, dim, index, t)  # noqa: E731
    if reduce == "mean":
        n = _ones_like(g) if include_self else _zeros(tuple(g.shape), g.dtype)
        n = spread(n, _ones_like(source))
        n = n.masked_fill(n == 0, 1)
        gs, gsrc = g / n, pick(g) / pick(n)
    elif reduce == "prod":
        gs, gsrc = _prod_grads(g, self, source, res, pick, spread,
                               lambda base, src: _index_reduce(base, dim, index, src, reduce,
                                                               include_self))
    else:
        self_is = (self == res).to(g.dtype)
        src_is = (source == pick(res)).to(g.dtype)
        share = g / spread(self_is, src_is)
        gs, gsrc = self_is * share, src_is * pick(share)
    if not include_self:
        gs = I.index_fill(gs, dim, index, 0)
    return gs, None, None, S.reshape(gsrc, ctx.shapes[2]), None, None


def _prod_grads(g, self, src, res, pick, spread, redo):
    """PyTorch's prod backward: zeros in self or src are masked so a single zero gets
    the product of the others; positions with two zeros get no gradient."""
    masked_self = self.masked_fill(self == 0, 1)
    gs = g * redo(masked_self, src) / masked_self
    src_zero = src == 0
    n_zeros = pick(spread(_zeros(tuple(self.shape), self.dtype), src_zero.to(self.dtype)))
    single = src_zero & (n_zeros == 1)
    with_one = redo(self, src.masked_fill(single, 1))
    from .indexing import where
    gsrc = where(single, pick(g * with_one), pick(g * res) / src.masked_fill(src_zero, 1))
    return gs, gsrc


def _index_reduce_decomp(x, dim, index, source, reduce, include_self=True):
    """scatter_reduce with index laid along dim."""
    from .. import _prims as P
    return P.scatter_reduce(x, dim, I._along(index, dim, source), source, reduce, include_self)


INDEX_REDUCE = register("index_reduce", _index_reduce_kernel, meta=_index_reduce_meta,
                        save=None, save_out=True, vjp=_index_reduce_vjp,
                        tags=("scatter", "nondeterministic"), decomp=_index_reduce_decomp,
                        schema="index_reduce(Tensor self, int dim, Tensor index, Tensor source, "
                               "str reduce, *, bool include_self=True) -> Tensor")


def _index_reduce(input, d, index, source, reduce, include_self):
    return dispatch(INDEX_REDUCE, (input, d, index, source, reduce, bool(include_self)))


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    d = _check_index_reduce(input, dim, index, source, reduce)
    return _out(_index_reduce(input, d, index, source, reduce, include_self), out,
                "index_reduce")


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    d = _check_index_reduce(self, dim, index, source, reduce)
    return inplace(INDEX_REDUCE, self, (self, d, index, source, reduce, bool(include_self)))


# ------------------------------------------------------------------ scatter_reduce

_SCATTER_REDUCE = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_kernel(a, dim, index, src, reduce, include_self):
    out = _work_copy(a)
    view = _as1d(out)
    idx = _as1d(index)
    if idx.size:
        I._check_bounds(idx, view.shape[dim], dim)
        s = _as1d(src)[tuple(slice(0, n) for n in idx.shape)].astype(out.dtype)
        _reduce_at(view, I._along_key(idx, dim), s, reduce, include_self)
    return out.astype(a.dtype, copy=False)


def _check_scatter_reduce(self, dim, index, src, reduce):
    d = I._check_gather_like("scatter", self, dim, index, src)
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    return d


def _scatter_reduce_meta(self, dim, index, src, reduce, include_self):
    _check_scatter_reduce(self, dim, index, src, reduce)
    I._check_bounds(index._data.reshape(-1), (self.shape or (1,))[dim], dim)
    return tuple(self.shape), self.dtype


def _scatter_reduce_vjp(ctx, g):
    self, dim, index, src_full, reduce, include_self = ctx.args
    res = ctx.out
    src_shape = ctx.shapes[2]
    src = _head(src_full, index)
    pick = lambda t: I.gather(t, dim, index)                 # noqa: E731
    spread = lambda base, t: I.scatter_add(base, dim, index, t)  # noqa: E731
    if reduce == "sum":
        gs, gsrc = g, pick(g)
    elif reduce == "mean":
        n = _ones_like(g) if include_self else _zeros(tuple(g.shape), g.dtype)
        n = spread(n, _ones_like(src))
        n = n.masked_fill(n == 0, 1)
        gs = g / n
        gsrc = pick(gs)
    elif reduce == "prod":
        gs, gsrc = _prod_grads(g, self, src, res, pick, spread,
                               lambda base, s: _scatter_reduce(base, dim, index, s, reduce,
                                                               include_self))
    else:
        self_is = (self == res).to(g.dtype)
        src_is = (src == pick(res)).to(g.dtype)
        share = g / spread(self_is, src_is)
        gs, gsrc = self_is * share, src_is * pick(share)
    if not include_self:
        gs = I.scatter(gs, dim, index, 0)
    gsrc = I._pad_to(gsrc, src_shape) if tuple(gsrc.shape) != tuple(src_shape) else gsrc
    return gs, None, None, gsrc, None, None


def _head(src, index):
    """src cut to index's shape (scatter reads only that corner of src)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


SCATTER_REDUCE = register("scatter_reduce", _scatter_reduce_kernel, meta=_scatter_reduce_meta,
                          save=None, save_out=True, vjp=_scatter_reduce_vjp,
                          tags=("prim", "scatter", "nondeterministic"),
                          schema="scatter_reduce.two(Tensor self, int dim, Tensor index, "
                                 "Tensor src, str reduce, *, bool include_self=True) -> Tensor")


def _scatter_reduce(input, d, index, src, reduce, include_self):
    return dispatch(SCATTER_REDUCE, (input, d, index, src, reduce, bool(include_self)))


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    d = _check_scatter_reduce(input, dim, index, src, reduce)
    return _out(_scatter_reduce(input, d, index, src, reduce, include_self), out,
                "scatter_reduce")


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    d = _check_scatter_reduce(self, dim, index, src, reduce)
    return inplace(SCATTER_REDUCE, self, (self, d, index, src, reduce, bool(include_self)))


export(__all__, take_along_dim, index_copy, index_reduce, scatter_reduce)


# ------------------------------------------------------- clone / contiguous formats

def _clone(t, fmt=contiguous_format):
    from .copy import CLONE
    return dispatch(CLONE, (t, fmt))


def is_layout(a, fmt):
    """Is `a` laid out in memory format `fmt` (contiguous / channels_last[_3d])?"""
    name = getattr(fmt, "name", "contiguous_format")
    if name in _LAST_RANK:
        if a.ndim != _LAST_RANK[name]:
            return False
        perm = (0,) + tuple(range(2, a.ndim)) + (1,)
        return np.transpose(a, perm).flags.c_contiguous
    return a.flags.c_contiguous


def narrow_copy(input, dim, start, length, *, out=None):
    if input._data.ndim and isinstance(dim, int) and dim >= input._data.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.")
    return _out(_clone(S.narrow(input, dim, start, length)), out, "narrow_copy")


# ------------------------------------------------------------- the *_copy variants

def _copy_variant(name, view_fn):
    """torch.<name>: the view op's result as fresh contiguous tensors (a tuple for
    multi-output views); out= for single outputs."""
    def fn(input, *args, out=None, **kwargs):
        res = view_fn(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):
            if out is not None:
                raise NotImplementedError(f"ember: {name}(out=...) for multi-output views")
            return tuple(_clone(r) for r in res)
        return _out(_clone(res), out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Performs the same operation as the view `{name[:-5]}`, but copies."
    return fn


def _view_any(input, size, *rest):
    if isinstance(size, D.dtype):
        return input.view(size)
    return S.reshape(input, size, *rest)


def _slice_view(input, dim=0, start=None, end=None, step=1):
    d = _wrap_dim(dim, input._data.ndim, "slice")
    return S._slice(input, d, start, end, step)


def _expand_view(input, size, *, implicit=False):
    return S.expand(input, size)


_VIEWS = {
    "as_strided_copy": AS.as_strided,
    "diagonal_copy": S.diagonal,
    "expand_copy": _expand_view,
    "permute_copy": lambda input, dims: S.permute(input, dims),
    "select_copy": S.select,
    "slice_copy": _slice_view,
    "split_copy": S.split,
    "split_with_sizes_copy": S.split_with_sizes,
    "squeeze_copy": S.squeeze,
    "t_copy": S.t,
    "transpose_copy": S.transpose,
    "unbind_copy": S.unbind,
    "unfold_copy": S.unfold,
    "unsqueeze_copy": S.unsqueeze,
    "view_copy": _view_any,
    "detach_copy": lambda input: input.detach(),
    "alias_copy": lambda input: S.view(input, input._data.shape),
    "view_as_real_copy": C.view_as_real,
    "view_as_complex_copy": C.view_as_complex,
}
for _n, _f in _VIEWS.items():
    globals()[_n] = _copy_variant(_n, _f)
    __all__.append(_n)


# ------------------------------------------------------------------ kron / block_diag

def kron(input, other, *, out=None):
    for name, t in (("input", input), ("other", other)):
        if not isinstance(t, Tensor):
            pos = 1 if name == "input" else 2
            raise TypeError(f"kron(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    n = max(input._data.ndim, other._data.ndim)
    a = (1,) * (n - input._data.ndim) + input._data.shape
    b = (1,) * (n - other._data.ndim) + other._data.shape
    av = S.reshape(input, tuple(x for s in a for x in (s, 1)))
    bv = S.reshape(other, tuple(x for s in b for x in (1, s)))
    res = S.reshape(av * bv, tuple(x * y for x, y in zip(a, b)))
    return _out(res, out, "kron")


def block_diag(*tensors):
    from .creation import empty
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    if not tensors:
        return empty((1, 0))
    dtype = D.result_dtype(tensors)
    mats = [S.reshape(t, (1, -1) if t._data.ndim < 2 else t._data.shape).to(dtype)
            for t in tensors]
    width = sum(m._data.shape[1] for m in mats)
    rows, col = [], 0
    for m in mats:
        h, w = m._data.shape
        rows.append(S.cat([_zeros((h, col), dtype), m, _zeros((h, width - col - w), dtype)], 1))
        col += w
    return S.cat(rows, 0)


# ----------------------------------------------------------------------------- trace

def _trace_meta(input):
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    if input.dtype is D.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return (), (D.int64 if input.dtype._kind < 2 else input.dtype)


def _trace_kernel(a):
    if a.dtype.kind in "biu":
        return np.asarray(np.trace(a, dtype=np.int64))
    return np.asarray(np.trace(a.astype(np.float32) if a.dtype.itemsize == 2 else a)
                      ).astype(a.dtype)


def _trace_vjp(ctx, g):
    shape = ctx.shapes[0]
    diag = S.expand(g, (min(shape),))
    return (S.diagonal_scatter(_zeros(shape, g.dtype), diag),)


def _trace_decomp(a):
    """sum of the main diagonal."""
    from .. import _prims as P
    return P.sum(P.diagonal(a, 0, 0, 1), None, False, None)


TRACE = register("trace", _trace_kernel, meta=_trace_meta, save=(), vjp=_trace_vjp,
                 check=True, tags=("reduction",), amp_policy="fp32", decomp=_trace_decomp,
                 schema="trace(Tensor self) -> Tensor")


def trace(input):
    return dispatch(TRACE, (input,))


# ----------------------------------------------------------------------------- cdist

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def _mm_path(p, mode, r1, r2, nonempty):
    """PyTorch's choice of the matrix-product path for p=2 (compute_mode)."""
    return p == 2 and nonempty and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


def _cdist_kernel(x1, x2, p, mode=0):
    batch = np.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    x1 = np.broadcast_to(x1, batch + x1.shape[-2:])
    x2 = np.broadcast_to(x2, batch + x2.shape[-2:])
    if _mm_path(p, mode, x1.shape[-2], x2.shape[-2], x1.size and x2.size):
        n1 = (x1 * x1).sum(-1, keepdims=True)
        n2 = (x2 * x2).sum(-1, keepdims=True)
        a = np.concatenate([x1 * -2, n1, np.ones_like(n1)], -1)
        b = np.concatenate([x2, np.ones_like(n2), n2], -1)
        return np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 0))
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return np.count_nonzero(d, axis=-1).astype(x1.dtype)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return np.sqrt((d * d).sum(-1))
    if p == np.inf:
        return d.max(-1, initial=0)
    return ((d ** p).sum(-1)) ** (1.0 / p)


def _cdist_decomp(x1, x2, p, mode=0):
    if _mm_path(p, mode, x1.shape[-2], x2.shape[-2], x1.numel() and x2.numel()):
        return _euclidean_dist(x1, x2)
    d = (S.unsqueeze(x1, -2) - S.unsqueeze(x2, -3)).abs()
    if p == 0:
        return (d != 0).to(x1.dtype).sum(-1)
    if p == 1:
        return d.sum(-1)
    if p == 2:
        return (d * d).sum(-1).sqrt()
    if p == np.inf:
        return d.amax(-1) if d.shape[-1] else d.sum(-1)
    return (d ** p).sum(-1) ** (1.0 / p)


def _cdist_meta(x1, x2, p, mode=0):
    _check_cdist(x1, x2, p)
    if x1.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"cdist\" not implemented for '{_cpp(x1.dtype)}'")
    batch = _infer_size(x1.shape[:-2], x2.shape[:-2])
    return tuple(batch) + (x1.shape[-2], x2.shape[-2]), x1.dtype


def _cdist_vjp(ctx, g):
    """PyTorch's _cdist_backward (0 where the distance is 0), in ember ops; the engine
    sums the batch-broadcast gradients back."""
    x1, x2, p, _ = ctx.args
    res = ctx.out
    diff = S.unsqueeze(x1, -2) - S.unsqueeze(x2, -3)
    G = S.unsqueeze(g, -1)
    dist = S.unsqueeze(res, -1)
    zero = dist == 0
    safe = dist.masked_fill(zero, 1)
    if p == 0:
        dd = diff * 0
    elif p == 1:
        dd = G * diff.sign()
    elif p == 2:
        dd = (G * diff / safe).masked_fill(zero, 0)
    elif p == np.inf:
        dd = G * diff.sign() * (diff.abs() == dist).to(g.dtype)
    else:
        a = diff.abs()
        hole = zero | (a == 0) if p < 1 else zero
        a = a.masked_fill(hole, 1)
        dd = (diff.sign() * a ** (p - 1) * G / safe ** (p - 1)).masked_fill(hole, 0)
    g1 = dd.sum(-2) if ctx.needs_input_grad[0] else None
    g2 = -dd.sum(-3) if ctx.needs_input_grad[1] else None
    return g1, g2, None, None


# autocast runs cdist in float32 (PyTorch's CPU fp32 list); check=True so the dtype
# checks see the autocast-cast inputs
CDIST = register("cdist", _cdist_kernel, meta=_cdist_meta, save=(0, 1), check=True,
                 save_out=True, vjp=_cdist_vjp, decomp=_cdist_decomp, tags=("reduction",),
                 amp_policy="fp32",
                 schema="_cdist_forward(Tensor x1, Tensor x2, float p, "
                        "int? compute_mode) -> Tensor")


def _check_cdist(x1, x2, p):
    for name, t in (("X1", x1), ("X2", x2)):
        if t.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{t.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_cpp(t.dtype)}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_cpp(x1.dtype)} but found "
                           f"{_cpp(x2.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")


def _euclidean_dist(x1, x2):
    """PyTorch's matrix-product path for p=2 (faster, less exact), as ember ops."""
    from .creation import ones_like
    n1 = (x1 * x1).sum(-1, keepdim=True)
    n2 = (x2 * x2).sum(-1, keepdim=True)
    a = S.cat([x1 * -2, n1, ones_like(n1)], -1)
    b = S.cat([x2, ones_like(n2), n2], -1)
    return (a @ S.transpose(b, -1, -2)).clamp_min(0).sqrt()


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    return dispatch(CDIST, (x1, x2, float(p), _CDIST_MODES[compute_mode]))


export(__all__, narrow_copy, kron, block_diag, trace, cdist)


# ------------------------------------------------------------------------------- put

def put_(self, index, source, accumulate=False):
    """Writes source into the flattened self at index (take's inverse): an index_put_ on
    the unraveled positions, so autograd and in-place checks come with it."""
    if not isinstance(index, Tensor) or index._dtype is not D.int64:
        got = type_name(index._dtype) if isinstance(index, Tensor) else type(index).__name__
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {got}")
    if not isinstance(source, Tensor) or source._dtype is not self._dtype:
        got = type_name(source._dtype) if isinstance(source, Tensor) else type(source).__name__
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {type_name(self._dtype)} and source.dtype = {got}")
    if index._data.size != source._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {index._data.size}")
    n = self._data.size
    arr = index._data
    if arr.size and (arr.min() < -n or arr.max() >= n):
        raise IndexError(f"out of range: tried to access index "
                         f"{int(arr[(arr < -n) | (arr >= n)][0])} on a tensor of {n} elements.")
    target = self if self._data.ndim else S.unsqueeze(self, 0)
    shape = target._data.shape
    pos = np.unravel_index(np.where(arr < 0, arr + n, arr).reshape(-1), shape)
    from .creation import as_tensor
    idx = tuple(as_tensor(np.ascontiguousarray(p, dtype=np.int64)) for p in pos)
    target.index_put_(idx, source.reshape(-1), accumulate=accumulate)
    return self


def put(input, index, source, accumulate=False):
    return put_(input.clone(), index, source, accumulate)


export(__all__, put)


def _make_methods():
    METHODS["put_"] = put_
    METHODS["put"] = put
    METHODS["take_along_dim"] = take_along_dim
    METHODS["index_copy"] = index_copy
    METHODS["index_copy_"] = index_copy_
    METHODS["index_reduce"] = index_reduce
    METHODS["index_reduce_"] = index_reduce_
    METHODS["scatter_reduce"] = scatter_reduce
    METHODS["scatter_reduce_"] = scatter_reduce_
    METHODS["narrow_copy"] = narrow_copy
    METHODS["kron"] = kron
    METHODS["trace"] = trace


_make_methods()


def contiguous_as(t, fmt):
    """Tensor.contiguous(memory_format=channels_last[_3d]): self when already laid out so."""
    if fmt.name == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if is_layout(t._data, fmt):
        return t
    return _clone(t, fmt)
