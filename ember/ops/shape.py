"""View and shape ops: results alias the input's storage wherever PyTorch's do.

Note: view kernels return NumPy views (`view=True` ops), so `wrap_view` gives the
output the input's storage and version counter. `view` refuses shapes that need a
copy (PyTorch's error); `reshape` copies only then.
"""
import numpy as np

from .._dispatch import dispatch
from .._tensor import Tensor, Size, _wrap_dim
from ._registry import register

__all__ = []


def _export(*fns):
    for f in fns:
        globals()[f.__name__] = f
        __all__.append(f.__name__)


def _shape_arg(shape, numel, opname):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Size)):
        shape = tuple(shape[0])
    shape = tuple(int(s) for s in shape)
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
    out = a.view()
    try:
        out.shape = shape          # raises instead of copying
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None
    return out


VIEW = register("view", _view_kernel, view=True, save=(),
                vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None))
RESHAPE_COPY = register("_reshape_copy", lambda a, shape: np.reshape(a, shape).copy(),
                        save=(), vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None))


def _view_dtype(self, dtype):
    from .. import _dtype as D
    if not isinstance(dtype, D.dtype):
        raise TypeError("view(): argument 'dtype' must be torch.dtype")
    if dtype.itemsize != self._dtype.itemsize:
        raise RuntimeError("view(dtype): only same-size dtypes are supported by ember")
    from .._tensor import wrap_view
    t = wrap_view(self._data.view(dtype.np), self)
    t._dtype = dtype
    return t


def view(self, *shape):
    from .. import _dtype as D
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(self, shape[0])
    shape = _shape_arg(shape, self._data.size, "view")
    return dispatch(VIEW, (self, shape))


def reshape(input, *shape):
    shape = _shape_arg(shape, input._data.size, "reshape")
    if shape == input._data.shape:
        return dispatch(VIEW, (input, shape))
    try:
        test = input._data.view()
        test.shape = shape
    except AttributeError:
        return dispatch(RESHAPE_COPY, (input, shape))
    return dispatch(VIEW, (input, shape))


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
    (shape,) = [ctx.shapes[0]]
    from .creation import zeros
    _, size, stride, off = ctx.args
    return (as_strided_scatter(zeros(shape, dtype=g.dtype), g, size, stride, off), None, None, None)


AS_STRIDED = register("as_strided", _as_strided_kernel, view=True, save=(1, 2, 3),
                      vjp=_as_strided_vjp)


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


AS_STRIDED_SCATTER = register("as_strided_scatter", _as_strided_scatter_kernel,
                              vjp=_as_strided_scatter_vjp, save=(2, 3, 4))


def as_strided(input, size, stride, storage_offset=None):
    rel = 0 if storage_offset is None else storage_offset - input.storage_offset()
    return dispatch(AS_STRIDED, (input, tuple(size), tuple(stride), rel))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return dispatch(AS_STRIDED_SCATTER, (input, src, tuple(size), tuple(stride),
                                         storage_offset or 0))


def _expand_kernel(a, shape):
    return np.broadcast_to(a, shape)


def _expand_meta(a, shape):
    if len(shape) < a.dim():
        raise RuntimeError(f"expand(torch.{a.dtype.name}{{{list(a.shape)}}}, size={list(shape)}): "
                           "the number of sizes provided ({}) must be greater or equal to the "
                           "number of dimensions in the tensor ({})".format(len(shape), a.dim()))
    raise RuntimeError(f"The expanded size of the tensor must match the existing size at "
                       f"non-singleton dimension: target sizes {list(shape)}, tensor sizes "
                       f"{list(a.shape)}")


EXPAND = register("expand", _expand_kernel, view=True, save=(), meta=_expand_meta,
                  vjp=lambda ctx, g: (g.sum_to_size(ctx.shapes[0]), None))


def expand(self, *sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    nd = self._data.ndim
    lead = len(sizes) - nd
    if lead < 0:
        _expand_meta(self, sizes)
    shape = tuple(self._data.shape[i - lead] if s == -1 and i >= lead else int(s)
                  for i, s in enumerate(sizes))
    return dispatch(EXPAND, (self, shape))


def expand_as(self, other):
    return expand(self, other.shape)


def _permute_vjp(ctx, g):
    dims = ctx.args[1]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv), None)


PERMUTE = register("permute", lambda a, dims: np.transpose(a, dims), view=True, save=(1,),
                   vjp=_permute_vjp)


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
    return transpose(input, 0, 1) if input._data.ndim == 2 else dispatch(PERMUTE, (input, tuple(range(input._data.ndim))))


def _squeeze_kernel(a, dims):
    return np.squeeze(a, axis=tuple(d for d in dims if a.shape[d] == 1))


SQUEEZE = register("squeeze", _squeeze_kernel, view=True, save=(),
                   vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None))


def squeeze(input, dim=None):
    n = input._data.ndim
    if dim is None:
        dims = tuple(range(n))
    elif isinstance(dim, (list, tuple)):
        dims = tuple(_wrap_dim(d, n, "squeeze") for d in dim)
    else:
        dims = (_wrap_dim(dim, n, "squeeze"),)
    return dispatch(SQUEEZE, (input, dims if n else ()))


UNSQUEEZE = register("unsqueeze", lambda a, dim: np.expand_dims(a, dim), view=True, save=(),
                     vjp=lambda ctx, g: (g.reshape(ctx.shapes[0]), None))


def unsqueeze(input, dim):
    return dispatch(UNSQUEEZE, (input, _wrap_dim(dim, input._data.ndim + 1, "unsqueeze")))


def flatten(input, start_dim=0, end_dim=-1):
    n = input._data.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, n, "flatten"), _wrap_dim(end_dim, n, "flatten")
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._data.shape
    return reshape(input, shp[:s] + (-1 if 0 not in shp[s:e + 1] else 0,) + shp[e + 1:]) \
        if s != e else input


_export(view, reshape, as_strided, as_strided_scatter, expand, expand_as, permute,
        transpose, t, squeeze, unsqueeze, flatten)


def _install():
    T = Tensor
    T.view = view
    T.reshape = reshape
    T.view_as = lambda self, other: view(self, other.shape)
    T.reshape_as = lambda self, other: reshape(self, other.shape)
    T.as_strided = as_strided
    T.expand = expand
    T.expand_as = expand_as
    T.permute = permute
    T.transpose = transpose
    T.swapaxes = transpose
    T.swapdims = transpose
    T.t = t
    T.T = property(lambda self: permute(self, tuple(reversed(range(self._data.ndim)))))
    T.mT = property(lambda self: transpose(self, -2, -1))
    T.squeeze = squeeze
    T.unsqueeze = unsqueeze
    T.flatten = flatten


_install()
