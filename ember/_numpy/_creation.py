"""NumPy array creation on Tensors: zeros/ones/full/empty(_like), arange, linspace,
logspace, eye, identity, tri, tril/triu, diag, meshgrid, array/asarray/copy.

Note: NumPy's defaults, not ember's: float64 for zeros/ones/eye/linspace (never
ember's default dtype, which a user may have changed), int64 for arange of ints,
`meshgrid` indexing 'xy', linspace computed with NumPy's own formula (start + i*step,
last point set to stop, floored for integer dtypes) so values match to the bit.
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import (Unsupported, cast, default_float, defaulted, norm_axis, python_dtype,
                    result_type, strong_dtypes,
                    shape_tuple, to_ember_dtype)
from ._util import asarray as _asarray


def _order(fn, order):
    if order not in ("C", "K", "A", None):
        raise Unsupported(f"numpy.{fn}(order={order!r}) is not supported when tracing")


def _fill_value(v, d):
    """A Python/NumPy scalar cast to d as NumPy's `astype` would (2.7 -> 2 for ints)."""
    if isinstance(v, Tensor):
        return v
    return np.asarray(v).astype(d.np).item()


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    _order("zeros", order)
    return ember.zeros(shape_tuple(shape), dtype=to_ember_dtype(dtype, "zeros"))


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    _order("ones", order)
    return ember.ones(shape_tuple(shape), dtype=to_ember_dtype(dtype, "ones") or default_float())


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    _order("empty", order)
    return ember.empty(shape_tuple(shape), dtype=to_ember_dtype(dtype, "empty"))


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    _order("full", order)
    shape = shape_tuple(shape)
    if isinstance(fill_value, Tensor):
        d = to_ember_dtype(dtype, "full") or fill_value.dtype
        return ember.broadcast_to(cast(fill_value, d), shape).clone()
    d = to_ember_dtype(dtype, "full") or (
        to_ember_dtype(fill_value.dtype, "full") if isinstance(fill_value, np.generic)
        else python_dtype(fill_value, "full"))
    return ember.full(shape, _fill_value(fill_value, d), dtype=d)


def _like(name, factory):
    def like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
        _order(name, order)
        x = _asarray(a)
        d = to_ember_dtype(dtype, name) or x.dtype
        return factory(tuple(x.shape) if shape is None else shape_tuple(shape), d)
    like.__name__ = name
    return like


zeros_like = _like("zeros_like", lambda s, d: ember.zeros(s, dtype=d))
ones_like = _like("ones_like", lambda s, d: ember.ones(s, dtype=d))
empty_like = _like("empty_like", lambda s, d: ember.empty(s, dtype=d))


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    _order("full_like", order)
    x = _asarray(a)
    d = to_ember_dtype(dtype, "full_like") or x.dtype
    s = tuple(x.shape) if shape is None else shape_tuple(shape)
    if isinstance(fill_value, Tensor):
        return ember.broadcast_to(cast(fill_value, d), s).clone()
    return ember.full(s, _fill_value(fill_value, d), dtype=d)


def arange(start_or_stop, /, stop=None, step=None, *, dtype=None, device=None, like=None):
    if stop is None:
        start, stop = 0, start_or_stop
    else:
        start = start_or_stop
    step = 1 if step is None else step
    if any(isinstance(v, Tensor) for v in (start, stop, step)):
        raise Unsupported("numpy.arange with array bounds would be a host read")
    if step == 0:
        raise ZeroDivisionError("division by zero")
    d = to_ember_dtype(dtype, "arange") or defaulted(to_ember_dtype(
        np.result_type(*[v if isinstance(v, np.generic) else np.asarray(v).dtype
                         for v in (start, stop, step)]), "arange"),
        strong_dtypes((start, stop, step)))
    n = max(int(np.ceil((stop - start) / step)), 0)
    if d.is_floating_point or d.is_complex:
        # NumPy fills start + i*step (in float64, then cast).
        i = ember.arange(n, dtype=D.float64)
        return cast(i * float(step) + float(start), d)
    return ember.arange(start, start + n * step, step, dtype=d)[:n] if n else ember.empty(
        (0,), dtype=d)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
             device=None):
    num = int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = result_type(start, stop, float(num))
    st, sp = _asarray(start, dt), _asarray(stop, dt)
    y = ember.arange(num, dtype=dt.to_real()).to(dt).reshape(
        (-1,) + (1,) * max(st.ndim, sp.ndim))
    delta = sp - st
    if div > 0:
        step = delta / div
        y = y * step
    else:
        step = ember.full(tuple(delta.shape), float("nan"), dtype=dt)
        y = y * delta
    y = y + st
    if endpoint and num > 1:
        y = ember.cat([y[:-1], ember.broadcast_to(sp, tuple(y.shape[1:])).unsqueeze(0)])
    if axis != 0:
        y = ember.movedim(y, 0, norm_axis(axis, y.ndim))
    d = to_ember_dtype(dtype, "linspace") or dt
    if d._kind == 1:
        y = ember.floor(y)
    y = cast(y, d)
    if retstep:
        return y, step
    return y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    b = _asarray(base)
    if b.ndim:
        b = b.unsqueeze(axis)
    from ._ufuncs import make_ufunc
    r = make_ufunc(np.power)(b if b.ndim else float(base) if isinstance(base, (int, float))
                             else b, y)
    d = to_ember_dtype(dtype, "logspace")
    return r if d is None else cast(r, d)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    _order("eye", order)
    M = N if M is None else M
    d = to_ember_dtype(dtype, "eye")
    if k == 0:
        return ember.eye(N, M, dtype=d)
    i = ember.arange(N, dtype=D.int64).reshape(-1, 1)
    j = ember.arange(M, dtype=D.int64).reshape(1, -1)
    return (j - i == k).to(d)


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=to_ember_dtype(dtype, "identity") or default_float())


def tri(N, M=None, k=0, dtype=float, *, like=None):
    M = N if M is None else M
    i = ember.arange(N, dtype=D.int64).reshape(-1, 1)
    j = ember.arange(M, dtype=D.int64).reshape(1, -1)
    return (j - i <= k).to(to_ember_dtype(dtype, "tri"))


def _tri_arg(m):
    x = _asarray(m)
    if x.ndim == 0:
        raise ValueError("input array must be at least 1-d")
    if x.ndim == 1:
        x = ember.broadcast_to(x, (x.shape[0], x.shape[0]))
    return x


def tril(m, k=0):
    return ember.tril(_tri_arg(m), k)


def triu(m, k=0):
    return ember.triu(_tri_arg(m), k)


def diag(v, k=0):
    x = _asarray(v)
    if x.ndim not in (1, 2):
        raise ValueError("Input must be 1- or 2-d.")
    return ember.diag(x, k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [_asarray(x).reshape(-1) for x in xi]
    nd = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * nd
        shape[i] = -1
        out.append(x.reshape(tuple(shape)))
    if indexing == "xy" and nd > 1:
        for j in range(nd):
            out[j] = out[j].swapaxes(0, 1)
    if not sparse:
        out = list(ember.broadcast_tensors(*out))
        if copy:
            out = [o.clone() for o in out]
    return tuple(out)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    _order("array", order)
    d = to_ember_dtype(dtype, "array")
    if isinstance(object, Tensor):
        x = cast(object, d) if d is not None else object
        if x is object and copy:
            x = ember.clone(x)
    else:
        x = _asarray(object, d, "array")
    while x.ndim < ndmin:
        x = x.unsqueeze(0)
    return x


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    x = _asarray(a, to_ember_dtype(dtype, "asarray"), "asarray")
    return ember.clone(x) if copy and x is a else x


def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    return asarray(a, dtype, order, copy=copy)


def ascontiguousarray(a, dtype=None, *, like=None):
    x = _asarray(a, to_ember_dtype(dtype, "ascontiguousarray"))
    return x.reshape(1) if x.ndim == 0 else x.contiguous()


def copy(a, order="K", subok=False):
    return ember.clone(_asarray(a))
