"""NumPy reductions and scans on Tensors (sum, mean, var, max, argmax, cumsum, median,
quantile, the nan* family).

Note: NumPy's dtype rules, not PyTorch's: bool and small ints sum into int64, mean/var of
ints is float64, `axis=None` reduces everything and `axis=()` nothing, `max` of an empty
axis raises ValueError. Reductions over an axis tuple go straight to ember's multi-dim
reductions; ops ember reduces over one dim only (prod, argmax, median) see the axes
moved to the end and merged.
"""
import builtins
import math

import numpy as np

import ember
from .. import _dtype as D
from ._util import (NoValue, Unsupported, asarray, cast, check_out, default_float,
                    float_dtype_for,
                    norm_axes, norm_axis, result_type, sum_dtype, to_ember_dtype)

_NAN = float("nan")


def _kd(keepdims):
    return False if keepdims is NoValue else bool(keepdims)


def _keep_shape(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _reduce(x, axis, keepdims, fn):
    """Apply fn(t, dims) over NumPy's `axis`; handles axis=() and keepdims."""
    axes = norm_axes(axis, x.ndim)
    if not axes:
        t = x.unsqueeze(-1)
        return fn(t, (t.ndim - 1,))
    r = fn(x, axes)
    if _kd(keepdims):
        r = r.reshape(_keep_shape(x.shape, axes))
    return r


def _collapse(t, dims):
    """Move `dims` to the end and merge them into one last dim."""
    rest = [i for i in range(t.ndim) if i not in dims]
    t = t.permute(*rest, *dims) if list(rest) + list(dims) != list(range(t.ndim)) else t
    n = 1
    for d in dims:
        n = n * t.shape[len(rest) + list(dims).index(d)]
    return t.reshape(tuple(t.shape[:len(rest)]) + (n,))


def _check_nonempty(x, axes, opname):
    if builtins.any(x.shape[a] == 0 for a in axes):
        raise ValueError(f"zero-size array to reduction operation {opname} which has no "
                         "identity")


def sum(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
        where=NoValue):
    check_out("sum", out)
    _no_where("sum", where)
    x = asarray(a)
    d = to_ember_dtype(dtype, "sum") or sum_dtype(x.dtype)
    r = _reduce(x, axis, keepdims, lambda t, dims: ember.sum(cast(t, d), dim=dims, dtype=d))
    return r if initial is NoValue else cast(r + initial, d)


def prod(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
         where=NoValue):
    check_out("prod", out)
    _no_where("prod", where)
    x = asarray(a)
    d = to_ember_dtype(dtype, "prod") or sum_dtype(x.dtype)
    r = _reduce(x, axis, keepdims, lambda t, dims: ember.prod(
        _collapse(cast(t, d), dims), dim=-1, dtype=d))
    return r if initial is NoValue else cast(r * initial, d)


def _no_where(fn, where):
    if where is not NoValue and where is not True:
        raise Unsupported(f"numpy.{fn}(where=...) is not supported when tracing NumPy code")


def mean(a, axis=None, dtype=None, out=None, keepdims=NoValue, *, where=NoValue):
    check_out("mean", out)
    _no_where("mean", where)
    x = asarray(a)
    d = to_ember_dtype(dtype, "mean") or float_dtype_for(x.dtype)
    comp = D.float32 if d in (D.float16, D.bfloat16) else d
    return _reduce(x, axis, keepdims,
                   lambda t, dims: cast(ember.mean(cast(t, comp), dim=dims), d))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    return _var_std("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    return _var_std("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _var_std(name, a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    check_out(name, out)
    _no_where(name, where)
    if mean_ is not NoValue:
        raise Unsupported(f"numpy.{name}(mean=...) is not supported when tracing NumPy code")
    if correction is not NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = asarray(a)
    d = to_ember_dtype(dtype, name) or float_dtype_for(x.dtype)
    comp = D.float32 if d in (D.float16, D.bfloat16) else d
    fn = ember.var if name == "var" else ember.std
    res = d.to_real() if d.is_complex else d
    return _reduce(x, axis, keepdims, lambda t, dims: cast(
        fn(cast(t, comp), dim=dims, correction=ddof), res))


def _minmax(name, ember_fn, combine):
    def red(a, axis=None, out=None, keepdims=NoValue, initial=NoValue, where=NoValue):
        check_out(name, out)
        _no_where(name, where)
        x = _no_complex(asarray(a), name)
        axes = norm_axes(axis, x.ndim)
        if initial is NoValue:
            _check_nonempty(x, axes, "maximum" if "max" in name else "minimum")
        elif builtins.any(x.shape[i] == 0 for i in axes):
            raise Unsupported(f"numpy.{name}(initial=...) over an empty axis")
        r = _reduce(x, axis, keepdims, lambda t, dims: ember_fn(t, dim=dims))
        if initial is not NoValue:
            init = np.asarray(initial).astype(r.dtype.np).item()
            r = combine(r, ember.full((), init, dtype=r.dtype))
        return r
    red.__name__ = name
    return red


max = _minmax("max", ember.amax, ember.maximum)
amax = _minmax("amax", ember.amax, ember.maximum)
min = _minmax("min", ember.amin, ember.minimum)
amin = _minmax("amin", ember.amin, ember.minimum)


def ptp(a, axis=None, out=None, keepdims=NoValue):
    from ._ufuncs import make_ufunc
    hi = max(a, axis=axis, out=out, keepdims=keepdims)
    lo = min(a, axis=axis, keepdims=keepdims)
    return make_ufunc(np.subtract)(hi, lo)


def _argext(name, ember_fn):
    def red(a, axis=None, out=None, *, keepdims=NoValue):
        check_out(name, out)
        x = _no_complex(asarray(a), name)
        if x.dtype is D.bool:
            x = x.to(D.uint8)
        if axis is None:
            if x.numel() == 0:
                raise ValueError(f"attempt to get {name} of an empty sequence")
            r = ember_fn(x.reshape(-1), dim=0)
            return r.reshape((1,) * x.ndim) if _kd(keepdims) else r
        ax = norm_axis(axis, x.ndim)
        if x.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        return ember_fn(x, dim=ax, keepdim=_kd(keepdims))
    red.__name__ = name
    return red


argmax = _argext("argmax", ember.argmax)
argmin = _argext("argmin", ember.argmin)


def all(a, axis=None, out=None, keepdims=NoValue, *, where=NoValue):
    check_out("all", out)
    _no_where("all", where)
    x = _truth(asarray(a))
    return _reduce(x, axis, keepdims, lambda t, dims: ember.all(t, dim=dims))


def any(a, axis=None, out=None, keepdims=NoValue, *, where=NoValue):
    check_out("any", out)
    _no_where("any", where)
    x = _truth(asarray(a))
    return _reduce(x, axis, keepdims, lambda t, dims: ember.any(t, dim=dims))


def _truth(x):
    return x if x.dtype is D.bool else x != 0


def _no_complex(x, name):
    if x.dtype.is_complex:
        raise Unsupported(f"numpy.{name} of complex arrays (NumPy's lexicographic order) "
                          "is not traced")
    return x


def _scan(name, ember_fn):
    def scan(a, axis=None, dtype=None, out=None):
        check_out(name, out)
        x = asarray(a)
        d = to_ember_dtype(dtype, name) or sum_dtype(x.dtype)
        if axis is None:
            x, ax = x.reshape(-1), 0
        else:
            ax = norm_axis(axis, x.ndim)
        return ember_fn(cast(x, d), dim=ax, dtype=d)
    scan.__name__ = name
    return scan


cumsum = _scan("cumsum", ember.cumsum)
cumprod = _scan("cumprod", ember.cumprod)


def count_nonzero(a, axis=None, *, keepdims=False):
    x = asarray(a)
    return sum(x != 0, axis=axis, keepdims=keepdims)


# --- the nan* family: NaNs ignored (replaced by the op's identity) --------------------

def _fill_nan(x, value):
    return ember.where(ember.isnan(x), value, x) if x.dtype._kind >= 2 else x


def nansum(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
           where=NoValue):
    return sum(_fill_nan(asarray(a), 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
            where=NoValue):
    return prod(_fill_nan(asarray(a), 1), axis, dtype, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_fill_nan(asarray(a), 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_fill_nan(asarray(a), 1), axis, dtype, out)


def _count(x, axis, keepdims):
    return sum(ember.logical_not(ember.isnan(x)), axis=axis, keepdims=keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=NoValue, *, where=NoValue):
    x = asarray(a)
    if x.dtype._kind < 2:
        return mean(x, axis, dtype, out, keepdims, where=where)
    check_out("nanmean", out)
    _no_where("nanmean", where)
    d = to_ember_dtype(dtype, "nanmean") or x.dtype
    comp = D.float32 if d in (D.float16, D.bfloat16) else d
    s = sum(_fill_nan(x, 0), axis, dtype=comp, keepdims=keepdims)
    return cast(s / _count(x, axis, keepdims), d)


def _nanvar(name, a, axis, dtype, out, ddof, keepdims, where, mean_, correction):
    x = asarray(a)
    if x.dtype._kind < 2:
        fn = var if name == "nanvar" else std
        return fn(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean_,
                  correction=correction)
    check_out(name, out)
    _no_where(name, where)
    if mean_ is not NoValue:
        raise Unsupported(f"numpy.{name}(mean=...) is not supported when tracing NumPy code")
    if correction is not NoValue:
        ddof = correction
    d = to_ember_dtype(dtype, name) or x.dtype
    comp = D.float32 if d in (D.float16, D.bfloat16) else d
    xc = cast(x, comp)
    n = _count(xc, axis, True)
    m = sum(_fill_nan(xc, 0), axis, keepdims=True) / n
    dev = _fill_nan(xc - m, 0)
    sq = dev * ember.conj(dev) if dev.dtype.is_complex else dev * dev
    v = sum(sq, axis, keepdims=keepdims) / ember.clamp(
        _count(xc, axis, keepdims) - ddof, min=0)
    if name == "nanstd":
        v = ember.sqrt(v)
    res = d.to_real() if d.is_complex else d
    return cast(ember.real(v) if v.dtype.is_complex else v, res)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    return _nanvar("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    return _nanvar("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _nanminmax(name, base, fill):
    def red(a, axis=None, out=None, keepdims=NoValue, initial=NoValue, where=NoValue):
        x = asarray(a)
        if x.dtype._kind < 2:
            return base(x, axis, out, keepdims, initial, where)
        r = base(_fill_nan(x, fill), axis, out, keepdims, initial, where)
        allnan = all(ember.isnan(x), axis=axis, keepdims=keepdims)
        return ember.where(allnan, _NAN, r)
    red.__name__ = name
    return red


nanmax = _nanminmax("nanmax", max, -math.inf)
nanmin = _nanminmax("nanmin", min, math.inf)


def _nanarg(name, base, fill):
    def red(a, axis=None, out=None, *, keepdims=NoValue):
        x = asarray(a)
        if x.dtype._kind >= 2:
            x = _fill_nan(x, fill)
        return base(x, axis, out, keepdims=keepdims)
    red.__name__ = name
    return red


nanargmax = _nanarg("nanargmax", argmax, -math.inf)
nanargmin = _nanarg("nanargmin", argmin, math.inf)


# --- order statistics ------------------------------------------------------------------

def _sorted_last(x, axis):
    """x (as a float dtype) with the reduced axes merged into a sorted last dim, the
    axes reduced, and the dtype."""
    axes = norm_axes(axis, x.ndim)
    d = float_dtype_for(_no_complex(x, "median").dtype)
    t = cast(x, d)
    t = t.unsqueeze(-1) if not axes else _collapse(t, axes)
    return ember.sort(t, dim=-1).values, axes, d


def _finish(r, x, axes, keepdims):
    if keepdims and axes:
        r = r.reshape(_keep_shape(x.shape, axes))
    return r


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    check_out("median", out)
    x = asarray(a)
    s, axes, d = _sorted_last(x, axis)
    n = s.shape[-1]
    if n == 0:
        r = ember.full(tuple(s.shape[:-1]), _NAN, dtype=d)
    else:
        lo, hi = s[..., (n - 1) // 2], s[..., n // 2]
        r = ember.where(ember.isnan(s[..., -1]), s[..., -1], (lo + hi) / 2)
    return _finish(r, x, axes, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=NoValue):
    check_out("nanmedian", out)
    x = asarray(a)
    if x.dtype._kind < 2:
        return median(x, axis, keepdims=_kd(keepdims))
    s, axes, d = _sorted_last(x, axis)
    if s.shape[-1] == 0:
        return _finish(ember.full(tuple(s.shape[:-1]), _NAN, dtype=d), x, axes, _kd(keepdims))
    k = ember.sum(ember.logical_not(ember.isnan(s)), dim=-1, keepdim=True)
    lo = ember.take_along_dim(s, ember.clamp((k - 1) // 2, min=0), dim=-1)
    hi = ember.take_along_dim(s, ember.clamp(k // 2, max=s.shape[-1] - 1), dim=-1)
    r = ember.where(k == 0, _NAN, (lo + hi) / 2).squeeze(-1)
    return _finish(r, x, axes, _kd(keepdims))


def _lerp(a, b, t):
    """NumPy's _lerp: a + (b-a)*t, computed from b's end for t >= 0.5 (monotone)."""
    diff = b - a
    return ember.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    check_out("quantile", out)
    if method != "linear" or interpolation is not None or weights is not None:
        raise Unsupported("numpy.quantile: only method='linear' without weights is traced")
    return _quantile(asarray(a), q, axis, keepdims, type(q) in (int, float))


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    check_out("percentile", out)
    if method != "linear" or interpolation is not None or weights is not None:
        raise Unsupported("numpy.percentile: only method='linear' without weights is traced")
    x = asarray(a)
    from ._ufuncs import make_ufunc
    # NumPy: q = np.true_divide(q, a.dtype.type(100) if a is float else 100)
    hundred = x.dtype.np.type(100) if x.dtype.is_floating_point else 100
    weak = type(q) in (int, float)
    q = make_ufunc(np.true_divide)(q if weak else asarray(q), hundred)
    return _quantile(x, q, axis, keepdims, weak)


def _quantile(x, q, axis, keepdims, weak, skip_nan=False):
    """NumPy's linear-method _quantile: virtual index (n-1)*q in q's dtype, gamma its
    fractional part (a Python float, so in the array's dtype, when q was a Python scalar),
    lerp in the result dtype. skip_nan: n is each slice's count of non-NaN values (sorted
    first), as nanquantile's per-slice NaN removal."""
    s, axes, comp = _sorted_last(x, axis)
    qt = q if isinstance(q, ember.Tensor) else asarray(q)
    qd = float_dtype_for(qt.dtype)
    d = comp if weak else result_type(comp, qt)
    n = s.shape[-1]
    if n == 0:
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    qf = cast(qt, qd).reshape(-1)
    if skip_nan:
        k = ember.sum(ember.logical_not(ember.isnan(s)), dim=-1, keepdim=True)
        idx = qf * cast(k - 1, qd)                      # (..., nq)
    else:
        idx = qf * (n - 1)                              # (nq,)
    lo = ember.floor(idx)
    t = cast(cast(idx - lo, comp if weak else qd), d)
    lo_i = ember.clamp(lo.to(D.int64), 0, n - 1)
    s = cast(s, d)
    if skip_nan:
        hi_i = ember.minimum(lo_i + 1, ember.clamp(k - 1, min=0))
        a_ = ember.take_along_dim(s, lo_i, dim=-1)
        b_ = ember.take_along_dim(s, hi_i, dim=-1)
    else:
        hi_i = ember.clamp(lo_i + 1, 0, n - 1)
        a_ = ember.index_select(s, -1, lo_i)
        b_ = ember.index_select(s, -1, hi_i)
    r = _lerp(a_, b_, t)
    if skip_nan:
        r = ember.where(k == 0, _NAN, r)
    else:
        r = ember.where(ember.isnan(s[..., -1:]), s[..., -1:], r)
    # (..., nq) -> q.shape + (...)
    r = r.movedim(-1, 0).reshape(tuple(qt.shape) + tuple(s.shape[:-1]))
    if keepdims and axes:
        r = r.reshape(tuple(qt.shape) + _keep_shape(x.shape, axes))
    return r


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=NoValue, *, weights=None, interpolation=None):
    check_out("nanquantile", out)
    if method != "linear" or interpolation is not None or weights is not None:
        raise Unsupported("numpy.nanquantile: only method='linear' without weights is traced")
    x = asarray(a)
    return _quantile(x, q, axis, _kd(keepdims), type(q) in (int, float),
                     skip_nan=x.dtype._kind >= 2)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=NoValue, *, weights=None, interpolation=None):
    check_out("nanpercentile", out)
    if method != "linear" or interpolation is not None or weights is not None:
        raise Unsupported("numpy.nanpercentile: only method='linear' without weights is "
                          "traced")
    x = asarray(a)
    from ._ufuncs import make_ufunc
    hundred = x.dtype.np.type(100) if x.dtype.is_floating_point else 100
    weak = type(q) in (int, float)
    q = make_ufunc(np.true_divide)(q if weak else asarray(q), hundred)
    return _quantile(x, q, axis, _kd(keepdims), weak, skip_nan=x.dtype._kind >= 2)


def average(a, axis=None, weights=None, returned=False, *, keepdims=NoValue):
    x = asarray(a)
    if weights is None:
        avg = mean(x, axis, keepdims=keepdims)
        scl = ember.full(tuple(avg.shape), 1, dtype=avg.dtype) * (
            x.numel() // builtins.max(avg.numel(), 1))
        return (avg, cast(scl, avg.dtype)) if returned else avg
    w = asarray(weights)
    if x.dtype._kind < 2:
        d = result_type(x, w, default_float())
    else:
        d = result_type(x, w)
    if tuple(w.shape) != tuple(x.shape):
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        axes = norm_axes(axis, x.ndim)
        if w.ndim != len(axes) or tuple(w.shape) != tuple(x.shape[i] for i in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        shape = [1] * x.ndim
        for i, ax in enumerate(axes):
            shape[ax] = w.shape[i]
        w = w.reshape(tuple(shape))
    w = ember.broadcast_to(cast(w, d), tuple(x.shape))
    scl = sum(w, axis, dtype=d, keepdims=keepdims)
    avg = sum(cast(x, d) * w, axis, dtype=d, keepdims=keepdims) / scl
    return (avg, scl) if returned else avg

