"""NumPy's numerical-differences and index helpers on Tensors: gradient, ediff1d, indices,
ix_, diag_indices, tril/triu_indices_from, fill_diagonal, delete, resize, block.

Note: `gradient` follows NumPy's formulas term by term (central differences inside,
first- or second-order one-sided at the edges, the non-uniform weights for coordinate
arrays) and writes into the array's float dtype as NumPy does. Everything here has a
shape known from the arguments (index lists are Python constants), so nothing reads data.
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import Unsupported, asarray, cast, default_float, norm_axes, norm_axis


def _sl(t, ax, start, stop):
    """t[..., start:stop, ...] along axis ax (Python slice bounds)."""
    idx = [slice(None)] * t.ndim
    idx[ax] = slice(start, stop)
    return t[tuple(idx)]


def _bshape(v, ax, ndim):
    """A 1-d coefficient array along axis `ax` of an ndim-d array."""
    shape = [1] * ndim
    shape[ax] = -1
    return v.reshape(tuple(shape))


def _gradient_axis(f, ax, dx, edge_order):
    n = f.shape[ax]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    nd = f.ndim
    if not isinstance(dx, Tensor):                       # uniform spacing
        inner = (_sl(f, ax, 2, None) - _sl(f, ax, None, -2)) / (2.0 * dx)
        if edge_order == 1:
            first = (_sl(f, ax, 1, 2) - _sl(f, ax, 0, 1)) / dx
            last = (_sl(f, ax, -1, None) - _sl(f, ax, -2, -1)) / dx
        else:
            a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
            first = a * _sl(f, ax, 0, 1) + b * _sl(f, ax, 1, 2) + c * _sl(f, ax, 2, 3)
            a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
            last = a * _sl(f, ax, -3, -2) + b * _sl(f, ax, -2, -1) + c * _sl(f, ax, -1, None)
        return ember.cat([first, inner, last], dim=ax)
    d = ember.diff(dx)                                   # coordinates: non-uniform
    dx1, dx2 = _bshape(d[:-1], ax, nd), _bshape(d[1:], ax, nd)
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = a * _sl(f, ax, None, -2) + b * _sl(f, ax, 1, -1) + c * _sl(f, ax, 2, None)
    if edge_order == 1:
        first = (_sl(f, ax, 1, 2) - _sl(f, ax, 0, 1)) / d[0]
        last = (_sl(f, ax, -1, None) - _sl(f, ax, -2, -1)) / d[-1]
    else:
        e1, e2 = d[0], d[1]
        a = -(2.0 * e1 + e2) / (e1 * (e1 + e2))
        b = (e1 + e2) / (e1 * e2)
        c = -e1 / (e2 * (e1 + e2))
        first = a * _sl(f, ax, 0, 1) + b * _sl(f, ax, 1, 2) + c * _sl(f, ax, 2, 3)
        e1, e2 = d[-2], d[-1]
        a = e2 / (e1 * (e1 + e2))
        b = -(e2 + e1) / (e1 * e2)
        c = (2.0 * e2 + e1) / (e2 * (e1 + e2))
        last = a * _sl(f, ax, -3, -2) + b * _sl(f, ax, -2, -1) + c * _sl(f, ax, -1, None)
    return ember.cat([first, inner, last], dim=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    t = asarray(f)
    axes = norm_axes(axis, t.ndim)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and not isinstance(varargs[0], (Tensor, list, tuple)) \
            and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    otype = t.dtype if t.dtype._kind >= 2 else default_float()
    t = cast(t, otype)
    out = []
    for ax, dx in zip(axes, spacings):
        if isinstance(dx, (Tensor, list, tuple, np.ndarray)):
            dx = asarray(dx)
            if dx.ndim == 0:
                raise Unsupported("numpy.gradient with a 0-d array spacing")
            if dx.ndim != 1:
                raise ValueError("distances must be either scalars or 1d")
            if dx.shape[0] != t.shape[ax]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            if dx.dtype._kind < 2:
                dx = dx.to(default_float())
        elif isinstance(dx, np.generic):
            dx = dx.item()
        out.append(cast(_gradient_axis(t, ax, dx, edge_order), otype))
    return out[0] if len(out) == 1 else tuple(out)


def ediff1d(ary, to_end=None, to_begin=None):
    x = asarray(ary).reshape(-1)
    parts = []
    if to_begin is not None:
        parts.append(cast(asarray(to_begin), x.dtype).reshape(-1))
    from ._ufuncs import make_ufunc
    parts.append(make_ufunc(np.subtract)(x[1:], x[:-1]))       # bool raises, as NumPy
    if to_end is not None:
        parts.append(cast(asarray(to_end), x.dtype).reshape(-1))
    return ember.cat(parts) if len(parts) > 1 else parts[0]


def indices(dimensions, dtype=int, sparse=False):
    from ._util import to_ember_dtype
    d = to_ember_dtype(dtype, "indices")
    dims = tuple(dimensions)
    out = []
    for i, n in enumerate(dims):
        shape = [1] * len(dims)
        shape[i] = n
        r = ember.arange(n, dtype=d).reshape(tuple(shape))
        out.append(r if sparse else ember.broadcast_to(r, dims))
    if sparse:
        return tuple(out)
    return ember.stack(out) if out else ember.empty((0,), dtype=d)


def ix_(*args):
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        t = asarray(a)
        if t.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if t.dtype is D.bool:
            raise Unsupported("numpy.ix_ with boolean arrays (data-dependent size)")
        shape = [1] * nd
        shape[k] = t.shape[0]
        out.append(t.reshape(tuple(shape)))
    return tuple(out)


def diag_indices(n, ndim=2):
    idx = ember.arange(n, dtype=D.int64)
    return (idx,) * ndim


def diag_indices_from(arr):
    x = asarray(arr)
    if x.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(x.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(x.shape[0], x.ndim)


def _tri_from(fn, arr, k):
    x = asarray(arr)
    if x.ndim != 2:
        raise ValueError("input array must be 2-d")
    idx = fn(x.shape[0], x.shape[1], k)
    return idx[0], idx[1]


def triu_indices_from(arr, k=0):
    return _tri_from(ember.triu_indices, arr, k)


def tril_indices_from(arr, k=0):
    return _tri_from(ember.tril_indices, arr, k)


def fill_diagonal(a, val, wrap=False):
    """In place, as NumPy: the main diagonal of `a` (all dims equal for ndim > 2) gets val."""
    if not isinstance(a, Tensor):
        raise TypeError("fill_diagonal needs the array itself")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    if wrap and a.ndim == 2 and a.shape[0] > a.shape[1] + 1:
        raise Unsupported("numpy.fill_diagonal(wrap=True) of a tall matrix")
    if a.ndim == 2:
        diag = ember.diagonal(a)
    elif not a.is_contiguous():
        raise Unsupported("numpy.fill_diagonal of a non-contiguous n-d array")
    else:
        diag = a.reshape(-1)[::sum(a.shape[0] ** i for i in range(a.ndim))]
    if isinstance(val, Tensor) or isinstance(val, (list, tuple, np.ndarray)):
        v = cast(asarray(val), a.dtype).reshape(-1)
        reps = -(-diag.shape[0] // v.shape[0])
        diag.copy_(ember.tile(v, (reps,))[:diag.shape[0]])
    else:
        diag.fill_(np.asarray(val).astype(a.dtype.np).item())
    return None


def delete(arr, obj, axis=None):
    x = asarray(arr)
    if axis is None:
        x, ax = x.reshape(-1), 0
    else:
        ax = norm_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(obj, slice):
        drop = set(range(*obj.indices(n)))
    elif isinstance(obj, Tensor):
        raise Unsupported("numpy.delete with an array of indices (data-dependent)")
    else:
        items = [obj] if isinstance(obj, (int, np.integer)) else list(obj)
        if any(isinstance(i, (bool, np.bool_)) for i in items):
            raise Unsupported("numpy.delete with a boolean mask")
        drop = set()
        for i in items:
            i = int(i)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis {ax} with size {n}")
            drop.add(i % n)
    keep = [i for i in range(n) if i not in drop]
    return ember.index_select(x, ax, ember.tensor(keep, dtype=D.int64))


def resize(a, new_shape):
    x = asarray(a).reshape(-1)
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = 1
    for s in shape:
        total *= int(s)
    if x.shape[0] == 0 or total == 0:
        return ember.zeros(shape, dtype=x.dtype)
    reps = -(-total // x.shape[0])
    return ember.tile(x, (reps,))[:total].reshape(shape)


def block(arrays):
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list)
                                                                   else 0)
    if isinstance(arrays, tuple):
        raise TypeError("arrays is a tuple. Only lists can be used to arrange blocks, and "
                        "np.block does not allow implicit conversion from tuple to ndarray.")
    list_ndim = depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves.append(asarray(x))
    collect(arrays)
    from ._util import result_type
    dt = result_type(*leaves)
    nd = max([list_ndim] + [t.ndim for t in leaves])

    def build(x, level):
        if not isinstance(x, list):
            t = cast(asarray(x), dt)
            return t.reshape((1,) * (nd - t.ndim) + tuple(t.shape))
        parts = [build(e, level + 1) for e in x]
        return ember.cat(parts, dim=nd - list_ndim + level)
    return build(arrays, 0)


NAMES = ("gradient ediff1d indices ix_ diag_indices diag_indices_from triu_indices_from "
         "tril_indices_from fill_diagonal delete resize block")
