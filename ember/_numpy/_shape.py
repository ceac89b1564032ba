"""NumPy shape manipulation on Tensors (reshape, transpose, concatenate, stack, split,
flip, roll, tile, repeat, broadcast_to, atleast_*d ...).

Note: NumPy's argument names and rules: `axis` (not `dim`), `axis=None` meaning
"flatten first" for flip/roll/repeat/concatenate, concatenate/stack promote with
`np.result_type`, split returns a list, squeeze of a non-1 axis is a ValueError.
"""
import builtins

import numpy as np

import ember
from ._util import (Unsupported, asarray, cast, check_out, norm_axes,
                    norm_axis, result_type, shape_tuple, to_ember_dtype)


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    if order != "C":
        raise Unsupported(f"numpy.reshape(order={order!r}) is not supported when tracing")
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing 1 required positional argument: 'shape'")
    x = asarray(a)
    shape = shape_tuple(shape)
    _check_reshape(x, shape)
    return x.reshape(shape)


def _check_reshape(x, shape):
    """NumPy's ValueError for an impossible shape (ember raises RuntimeError)."""
    n = x.numel()
    known = 1
    for s in shape:
        if s != -1:
            known = known * s
    unknown = builtins.sum(1 for s in shape if s == -1)
    if unknown > 1:
        raise ValueError("can only specify one unknown dimension")
    if builtins.any(s < -1 for s in shape) or (
            known != n if unknown == 0 else (known == 0 or n % known != 0)):
        raise ValueError(f"cannot reshape array of size {n} into shape {tuple(shape)}")


def transpose(a, axes=None):
    x = asarray(a)
    if axes is None:
        return x.permute(*reversed(range(x.ndim)))
    axes = [norm_axis(ax, x.ndim) for ax in shape_tuple(axes)]
    if len(axes) != x.ndim or len(set(axes)) != x.ndim:
        raise ValueError("axes don't match array")
    return x.permute(*axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def matrix_transpose(x, /):
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return x.swapaxes(-1, -2)


def swapaxes(a, axis1, axis2):
    x = asarray(a)
    return x.transpose(norm_axis(axis1, x.ndim), norm_axis(axis2, x.ndim))


def moveaxis(a, source, destination):
    x = asarray(a)
    src = norm_axes(source if isinstance(source, (tuple, list)) else (source,), x.ndim)
    dst = norm_axes(destination if isinstance(destination, (tuple, list)) else (destination,),
                    x.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    return ember.movedim(x, src, dst)


def expand_dims(a, axis):
    x = asarray(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    nd = x.ndim + len(axes)
    axes = sorted(norm_axes(tuple(axes), nd))
    shape = list(x.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return x.reshape(tuple(shape))


def squeeze(a, axis=None):
    x = asarray(a)
    if axis is None:
        return x.reshape(tuple(s for s in x.shape if s != 1))
    axes = norm_axes(axis, x.ndim)
    if builtins.any(x.shape[ax] != 1 for ax in axes):
        raise ValueError("cannot select an axis to squeeze out which has size not equal "
                         "to one")
    return x.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))


def ravel(a, order="C"):
    if order not in ("C", "K", "A"):
        raise Unsupported(f"numpy.ravel(order={order!r}) is not supported when tracing")
    return asarray(a).reshape(-1)


def _arrays(arrays, dtype, name):
    if isinstance(arrays, ember.Tensor):
        arrays = arrays.unbind(0)
    xs = [asarray(x) for x in arrays]
    if not xs:
        raise ValueError("need at least one array to concatenate")
    d = to_ember_dtype(dtype, name) or result_type(*xs)
    for x in xs:
        if not np.can_cast(x.dtype.np, d.np, "same_kind"):
            raise TypeError(f"Cannot cast array data from {x.dtype.np!r} to {d.np!r} "
                            "according to the rule 'same_kind'")
    return [cast(x, d) for x in xs]


def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    check_out("concatenate", out)
    xs = _arrays(arrays, dtype, "concatenate")
    if axis is None:
        return ember.cat([x.reshape(-1) for x in xs])
    if xs[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ax = norm_axis(axis, xs[0].ndim)
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != xs[0].ndim:
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must "
                f"match exactly, but along dimension 0, the array at index 0 has "
                f"{xs[0].ndim} dimension(s) and the array at index {i} has {x.ndim} "
                "dimension(s)")
        for dim in range(x.ndim):
            if dim != ax and x.shape[dim] != xs[0].shape[dim]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must "
                    f"match exactly, but along dimension {dim}, the array at index 0 has "
                    f"size {xs[0].shape[dim]} and the array at index {i} has size "
                    f"{x.shape[dim]}")
    return ember.cat(xs, dim=ax)


def concat(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    check_out("stack", out)
    xs = _arrays(arrays, dtype, "stack")
    if builtins.any(tuple(x.shape) != tuple(xs[0].shape) for x in xs):
        raise ValueError("all input arrays must have the same shape")
    return ember.stack(xs, dim=norm_axis(axis, xs[0].ndim + 1))


def atleast_1d(*arys):
    res = [asarray(a) if asarray(a).ndim >= 1 else asarray(a).reshape(1) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


def atleast_2d(*arys):
    res = []
    for a in arys:
        x = asarray(a)
        res.append(x.reshape(1, 1) if x.ndim == 0 else x.unsqueeze(0) if x.ndim == 1 else x)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_3d(*arys):
    res = []
    for a in arys:
        x = asarray(a)
        if x.ndim == 0:
            x = x.reshape(1, 1, 1)
        elif x.ndim == 1:
            x = x.reshape(1, x.shape[0], 1)
        elif x.ndim == 2:
            x = x.unsqueeze(-1)
        res.append(x)
    return res[0] if len(res) == 1 else tuple(res)


def vstack(tup, *, dtype=None, casting="same_kind"):
    xs = _arrays(tup, dtype, "vstack")
    return concatenate([atleast_2d(x) for x in xs], axis=0)


def hstack(tup, *, dtype=None, casting="same_kind"):
    xs = [atleast_1d(x) for x in _arrays(tup, dtype, "hstack")]
    return concatenate(xs, axis=0 if xs[0].ndim == 1 else 1)


def dstack(tup):
    return concatenate([atleast_3d(x) for x in _arrays(tup, None, "dstack")], axis=2)


def column_stack(tup):
    xs = _arrays(tup, None, "column_stack")
    return concatenate([x.reshape(-1, 1) if x.ndim < 2 else x for x in xs], axis=1)


def _split(x, indices_or_sections, axis, name, equal):
    ax = norm_axis(axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % k:
            raise ValueError("array split does not result in an equal division")
        each, extra = divmod(n, k)
        sizes = [each + 1] * extra + [each] * (k - extra)
        bounds, start = [], 0
        for s in sizes:
            bounds.append((start, start + s))
            start += s
    else:
        idx = [int(i) for i in indices_or_sections]
        edges = [0] + idx + [n]
        bounds = []
        for lo, hi in zip(edges[:-1], edges[1:]):
            lo = builtins.min(builtins.max(lo + n if lo < 0 else lo, 0), n)
            hi = builtins.min(builtins.max(hi + n if hi < 0 else hi, 0), n)
            bounds.append((lo, builtins.max(hi, lo)))
    return [ember.narrow(x, ax, lo, hi - lo) for lo, hi in bounds]


def split(ary, indices_or_sections, axis=0):
    return _split(asarray(ary), indices_or_sections, axis, "split", True)


def array_split(ary, indices_or_sections, axis=0):
    return _split(asarray(ary), indices_or_sections, axis, "array_split", False)


def hsplit(ary, indices_or_sections):
    x = asarray(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, axis=1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    x = asarray(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, axis=0)


def flip(m, axis=None):
    x = asarray(m)
    return ember.flip(x, norm_axes(axis, x.ndim))


def fliplr(m):
    x = asarray(m)
    if x.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return ember.flip(x, (1,))


def flipud(m):
    x = asarray(m)
    if x.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return ember.flip(x, (0,))


def rot90(m, k=1, axes=(0, 1)):
    x = asarray(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    return ember.rot90(x, k, [norm_axis(a, x.ndim) for a in axes])


def roll(a, shift, axis=None):
    x = asarray(a)
    if axis is None:
        return ember.roll(x.reshape(-1), shift, 0).reshape(tuple(x.shape))
    if isinstance(axis, (tuple, list)) or isinstance(shift, (tuple, list)):
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        if len(axes) == 1:
            axes = tuple(axes) * len(shifts)
        if len(axes) != len(shifts):
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
        out = x
        for s, ax in zip(shifts, axes):
            out = ember.roll(out, s, norm_axis(ax, x.ndim))
        return out
    return ember.roll(x, shift, norm_axis(axis, x.ndim))


def tile(A, reps):
    x = asarray(A)
    reps = shape_tuple(reps)
    return ember.tile(x, reps) if reps else ember.clone(x)


def repeat(a, repeats, axis=None):
    x = asarray(a)
    if axis is None:
        x, ax = x.reshape(-1), 0
    else:
        ax = norm_axis(axis, x.ndim)
    if isinstance(repeats, (list, tuple, ember.Tensor)):
        r = asarray(repeats)
        if r.ndim == 1 and r.shape[0] == 1:
            r = r.reshape(())
        if r.ndim == 0:
            raise Unsupported("numpy.repeat with a 0-d/one-element array of repeats")
        if isinstance(repeats, (list, tuple)):
            # Constant repeats: the source index of every output element is known here,
            # so the output size is static (fake tensors can carry it).
            if len(repeats) != x.shape[ax]:
                raise ValueError(f"operands could not be broadcast together with shape "
                                 f"({x.shape[ax]},) ({len(repeats)},)")
            src = [i for i, k in enumerate(repeats) for _ in range(int(k))]
            return ember.index_select(x, ax, ember.tensor(src, dtype=ember.int64))
        return ember.repeat_interleave(x, r, dim=ax)
    return ember.repeat_interleave(x, int(repeats), dim=ax)


def broadcast_to(array, shape, subok=False):
    x = asarray(array)
    shape = shape_tuple(shape)
    src = tuple(x.shape)
    ok = len(src) <= len(shape) and builtins.all(
        s == t or s == 1 for s, t in zip(src[::-1], shape[::-1]))
    if not ok:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {src} and requested shape {shape}")
    return ember.broadcast_to(x, shape)


def broadcast_arrays(*args, subok=False):
    return tuple(ember.broadcast_tensors(*[asarray(a) for a in args]))


def append(arr, values, axis=None):
    x, v = asarray(arr), asarray(values)
    if axis is None:
        return concatenate([x.reshape(-1), v.reshape(-1)])
    return concatenate([x, v], axis=axis)


def take(a, indices, axis=None, out=None, mode="raise"):
    check_out("take", out)
    if mode != "raise":
        raise Unsupported(f"numpy.take(mode={mode!r}) is not supported when tracing")
    x = asarray(a)
    idx = asarray(indices)
    if idx.dtype._kind != 1:
        raise TypeError("Cannot cast array data from dtype('float64') to dtype('int64') "
                        "according to the rule 'safe'")
    idx = cast(idx, ember.int64)
    if axis is None:
        x, ax = x.reshape(-1), 0
    else:
        ax = norm_axis(axis, x.ndim)
    n = x.shape[ax]
    flat = idx.reshape(-1)
    flat = ember.where(flat < 0, flat + n, flat)
    picked = ember.index_select(x, ax, flat)
    shape = tuple(x.shape[:ax]) + tuple(idx.shape) + tuple(x.shape[ax + 1:])
    return picked.reshape(shape)


def take_along_axis(arr, indices, axis=-1):
    x, idx = asarray(arr), asarray(indices)
    if idx.dtype._kind != 1:
        raise IndexError("`indices` must be an integer array")
    idx = cast(idx, ember.int64)
    if axis is None:
        return ember.take_along_dim(x.reshape(-1), idx, dim=0)
    if idx.ndim != x.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return ember.take_along_dim(x, idx, dim=norm_axis(axis, x.ndim))


def diagonal(a, offset=0, axis1=0, axis2=1):
    x = asarray(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1, a2 = norm_axis(axis1, x.ndim), norm_axis(axis2, x.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return ember.diagonal(x, offset, a1, a2)


def shape(a):
    return tuple(asarray(a).shape)


def ndim(a):
    return asarray(a).ndim


def size(a, axis=None):
    x = asarray(a)
    return x.numel() if axis is None else x.shape[norm_axis(axis, x.ndim)]

