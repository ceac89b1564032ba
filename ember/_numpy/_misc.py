"""NumPy selection, sorting and assorted functions on Tensors: where, nonzero, clip,
isclose, sort, argsort, searchsorted, diff, pad, round, fix, real/imag, angle,
nan_to_num, sinc.

Note: written with the ufunc implementations (`_U`) wherever NumPy's own Python code is
written with ufuncs (isclose, diff, fix, clip), so dtype promotion is NumPy's by
construction. Sorts are stable (NumPy's default quicksort is not, so argsort over ties
may order equal keys differently from NumPy's; values are the same).
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._ufuncs import make_ufunc
from ._util import (NoValue, Unsupported, asarray, cast, check_broadcast, check_out, dtype_key,
                    float_dtype_for, is_weak,
                    norm_axis, operands, result_type, to_ember_dtype)


class _Ufuncs:
    """NumPy-semantics ufuncs by name, made on first use."""
    def __getattr__(self, name):
        fn = make_ufunc(getattr(np, name))
        setattr(self, name, fn)
        return fn


_U = _Ufuncs()


def _bool(x):
    x = asarray(x)
    return x if x.dtype is D.bool else x != 0


def where(condition, x=NoValue, y=NoValue, /):
    if x is NoValue and y is NoValue:
        return nonzero(condition)
    if x is NoValue or y is NoValue:
        raise ValueError("either both or neither of x and y should be given")
    cond = _bool(condition)
    a, b = operands((x, y), "where")
    check_broadcast((cond, a, b))
    d = result_type(a, b)
    ta = cast(a, d) if isinstance(a, Tensor) else ember.full((), _scalar(a), dtype=d)
    tb = cast(b, d) if isinstance(b, Tensor) else ember.full((), _scalar(b), dtype=d)
    return ember.where(cond, ta, tb)


def _scalar(v):
    return v.item() if isinstance(v, np.generic) else v


def nonzero(a):
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead. If the context of this "
                         "error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.")
    return tuple(ember.nonzero(_bool(x), as_tuple=True))


def argwhere(a):
    x = asarray(a)
    if x.ndim == 0:
        x = x.reshape(1)
        return ember.argwhere(_bool(x))[:, :0]
    return ember.argwhere(_bool(x))


def flatnonzero(a):
    return nonzero(asarray(a).reshape(-1))[0]


def clip(a, a_min=NoValue, a_max=NoValue, out=None, *, min=NoValue, max=NoValue,
         **kwargs):
    check_out("clip", out)
    if kwargs:
        raise Unsupported(f"numpy.clip({', '.join(kwargs)}=...) is not supported when tracing")
    if min is not NoValue:
        if a_min is not NoValue:
            raise ValueError("Passed more than one argument for min")
        a_min = min
    if max is not NoValue:
        if a_max is not NoValue:
            raise ValueError("Passed more than one argument for max")
        a_max = max
    a_min = None if a_min is NoValue else a_min
    a_max = None if a_max is NoValue else a_max
    x = asarray(a)
    if x.dtype.is_complex:
        raise Unsupported("numpy.clip of complex arrays is not traced")
    # NumPy's _methods._clip, step by step (out-of-range Python int bounds are no bounds).
    if x.dtype._kind == 1:
        info = np.iinfo(x.dtype.np)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
    if a_min is None and a_max is None:
        return _U.positive(x)
    if a_min is None:
        return _U.minimum(x, a_max)
    if a_max is None:
        return _U.maximum(x, a_min)
    ops = operands((x, a_min, a_max), "clip")
    uf = np._core.umath.clip
    loop = uf.resolve_dtypes(tuple(dtype_key(v) for v in ops) + (None,))
    d = to_ember_dtype(loop[0], "clip")
    lo, hi = (cast(v, d) if isinstance(v, Tensor) else _scalar(v) for v in ops[1:])
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        r = _U.minimum(_U.maximum(cast(x, d), lo), hi)
    else:
        r = ember.clamp(cast(x, d), lo, hi)
        if d.is_floating_point:
            r = ember.where(ember.isnan(x), cast(x, d), r)
    return cast(r, to_ember_dtype(loop[-1], "clip"))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    x, y = (v if is_weak(v) else asarray(v) for v in (a, b))
    if isinstance(y, Tensor):
        y = cast(y, result_type(y, 1.0))
    elif isinstance(y, int):
        y = float(y)
    result = _U.bitwise_or(
        _U.bitwise_and(_U.less_equal(_U.absolute(_U.subtract(x, y)),
                                     _U.add(atol, _U.multiply(rtol, _U.absolute(y)))),
                       _U.isfinite(y)),
        _U.equal(x, y))
    if equal_nan:
        result = _U.bitwise_or(result, _U.bitwise_and(_U.isnan(x), _U.isnan(y)))
    return result


def _sort_axis(x, axis):
    if axis is None:
        return x.reshape(-1), 0
    return x, norm_axis(axis, x.ndim)


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise Unsupported("numpy.sort(order=...) (structured arrays)")
    x, ax = _sort_axis(asarray(a), axis)
    if x.dtype.is_complex:
        raise Unsupported("numpy.sort of complex arrays (lexicographic order)")
    return ember.sort(x, dim=ax, stable=True).values


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise Unsupported("numpy.argsort(order=...) (structured arrays)")
    x = asarray(a)
    if x.ndim == 0 and axis is not None:
        norm_axis(axis, 1)          # NumPy sorts a 0-d array as one element
        return ember.zeros((1,), dtype=D.int64)
    x, ax = _sort_axis(x, axis)
    if x.dtype.is_complex:
        raise Unsupported("numpy.argsort of complex arrays (lexicographic order)")
    return ember.argsort(x, dim=ax, stable=True)


def _index(i):
    t = asarray(i)
    if t.dtype._kind != 1:
        raise TypeError("Cannot cast array data to int64 according to the rule 'safe'")
    return cast(t, D.int64)


def searchsorted(a, v, side="left", sorter=None):
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    x = asarray(a)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array")
    if x.dtype.is_complex:
        raise Unsupported("numpy.searchsorted of complex arrays (lexicographic order)")
    vals = v if is_weak(v) else asarray(v)
    d = result_type(x, vals)
    vt = cast(asarray(vals), d) if isinstance(vals, Tensor) else ember.full((), vals, dtype=d)
    x = cast(x, d)
    if sorter is not None:
        x = ember.take_along_dim(x, _index(sorter), dim=0)
    return ember.searchsorted(x, vt, right=side == "right")


def diff(a, n=1, axis=-1, prepend=NoValue, append=NoValue):
    if n == 0:
        return asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    x = asarray(a)
    if x.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = norm_axis(axis, x.ndim)
    parts = []
    for extra in (prepend,):
        if extra is not NoValue:
            parts.append(_edge(extra, x, ax))
    parts.append(x)
    if append is not NoValue:
        parts.append(_edge(append, x, ax))
    if len(parts) > 1:
        from ._shape import concatenate
        x = concatenate(parts, axis=ax)
    op = _U.not_equal if x.dtype is D.bool else _U.subtract
    for _ in range(n):
        m = x.shape[ax]
        x = op(ember.narrow(x, ax, 1, max(m - 1, 0)), ember.narrow(x, ax, 0, max(m - 1, 0)))
    return x


def _edge(v, x, ax):
    t = asarray(v)
    if t.ndim == 0:
        shape = list(x.shape)
        shape[ax] = 1
        t = ember.broadcast_to(t, tuple(shape))
    return t


def _pad_widths(pad_width, ndim):
    pw = np.asarray(pad_width)
    if pw.dtype.kind not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    pw = np.broadcast_to(pw, (ndim, 2)).tolist()
    if any(w < 0 for p in pw for w in p):
        raise ValueError("index can't contain negative values")
    return pw


def _pad_index(n, before, after, mode):
    """Source indices along one axis for edge/wrap/reflect/symmetric padding."""
    i = ember.arange(-before, n + after, dtype=D.int64)
    if mode == "edge":
        return ember.clamp(i, 0, n - 1)
    if mode == "wrap":
        return ember.remainder(i, n)
    if mode == "reflect":
        if n == 1:
            return ember.zeros_like(i)
        p = 2 * (n - 1)
        j = ember.remainder(i, p)
        return ember.where(j >= n, p - j, j)
    p = 2 * n   # symmetric
    j = ember.remainder(i, p)
    return ember.where(j >= n, p - 1 - j, j)


def pad(array, pad_width, mode="constant", **kwargs):
    x = asarray(array)
    pw = _pad_widths(pad_width, x.ndim)
    if mode == "constant":
        extra = set(kwargs) - {"constant_values"}
        if extra:
            raise ValueError(f"unsupported keyword arguments for mode 'constant': {extra}")
        cv = kwargs.get("constant_values", 0)
        if isinstance(cv, Tensor):
            raise Unsupported("numpy.pad with array constant_values")
        cvs = np.broadcast_to(np.asarray(cv, dtype=object), (x.ndim, 2)).tolist()
        for ax, ((b, a), (cb, ca)) in enumerate(zip(pw, cvs)):
            pieces = []
            for w, c in ((b, cb), (0, None), (a, ca)):
                if c is None:
                    pieces.append(x)
                elif w:
                    shape = list(x.shape)
                    shape[ax] = w
                    val = np.asarray(c).astype(x.dtype.np).item()
                    pieces.append(ember.full(tuple(shape), val, dtype=x.dtype))
            if len(pieces) > 1:
                x = ember.cat(pieces, dim=ax)
        return x
    if mode in ("edge", "wrap", "reflect", "symmetric"):
        if kwargs.get("reflect_type", "even") != "even":
            raise Unsupported("numpy.pad(reflect_type='odd')")
        for ax, (b, a) in enumerate(pw):
            if b or a:
                n = x.shape[ax]
                if n == 0:
                    raise ValueError(f"can't extend empty axis {ax} using modes other than "
                                     "'constant' or 'empty'")
                x = ember.index_select(x, ax, _pad_index(n, b, a, mode))
        return x
    raise Unsupported(f"numpy.pad(mode={mode!r}) is not supported when tracing")


def round(a, decimals=0, out=None):
    check_out("round", out)
    x = asarray(a)
    if x.dtype is D.bool:
        if decimals:
            raise TypeError("Cannot cast ufunc 'multiply' output from dtype('float64') to "
                            "dtype('bool') with casting rule 'same_kind'")
        return _U.rint(x)       # NumPy rounds bool through rint's float16 loop
    if x.dtype._kind >= 2:
        if x.dtype.is_complex:
            return ember.complex(ember.round(x.real, decimals=decimals),
                                 ember.round(x.imag, decimals=decimals))
        return ember.round(x, decimals=decimals)
    if decimals >= 0:
        return ember.clone(x)
    m = 10 ** (-decimals)
    # NumPy rounds integers half to even at 10**-decimals.
    q = ember.div(x, m, rounding_mode="floor")
    r = x - q * m
    up = (2 * r > m) | ((2 * r == m) & (ember.remainder(q, 2) == 1))
    return cast((q + up.to(x.dtype)) * m, x.dtype)


def fix(x, out=None):
    check_out("fix", out)
    t = asarray(x)
    return ember.where(_U.greater_equal(t, 0), _U.floor(t), _U.ceil(t))


def real(val):
    x = asarray(val)
    return ember.real(x) if x.dtype.is_complex else x


def imag(val):
    x = asarray(val)
    return ember.imag(x) if x.dtype.is_complex else ember.zeros_like(x)


def angle(z, deg=False):
    x = asarray(z)
    x = cast(x, float_dtype_for(x.dtype))
    r = ember.angle(x)
    return ember.rad2deg(r) if deg else r


def iscomplex(x):
    t = asarray(x)
    return ember.imag(t) != 0 if t.dtype.is_complex else ember.zeros(tuple(t.shape),
                                                                     dtype=D.bool)


def isreal(x):
    return ember.logical_not(iscomplex(x))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    t = asarray(x)
    if t.dtype._kind < 2:
        return ember.clone(t) if copy else t
    return ember.nan_to_num(t, nan=nan, posinf=posinf, neginf=neginf)


def sinc(x):
    t = asarray(x)
    return ember.sinc(cast(t, float_dtype_for(t.dtype)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x, y = asarray(a), asarray(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = ember.movedim(x, norm_axis(axisa, x.ndim), -1)
    y = ember.movedim(y, norm_axis(axisb, y.ndim), -1)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise Unsupported("numpy.cross of 2-vectors")
    d = result_type(x, y)
    r = ember.linalg.cross(cast(x, d), cast(y, d))
    return ember.movedim(r, -1, norm_axis(axisc, r.ndim))
