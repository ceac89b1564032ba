"""NumPy statistics and interpolation on Tensors: cov, corrcoef, trapezoid, interp, i0,
and the small index/selection helpers (select, isin, triu/tril_indices, unravel_index,
cumulative_sum/prod, vecdot, astype, isposinf/isneginf).

Note: each follows NumPy's own Python implementation step by step with the NumPy-semantics
pieces of this package, so the dtypes come out as NumPy's (cov of float32 is float64,
trapezoid of float32 stays float32, interp is float64).
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import (NoValue, Unsupported, asarray, cast, check_out, default_float,
                    float_dtype_for, is_weak, norm_axis,
                    result_type, sum_dtype, to_ember_dtype)


def _u(name):
    from ._ufuncs import make_ufunc
    return make_ufunc(getattr(np, name))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    if fweights is not None or aweights is not None:
        raise Unsupported("numpy.cov with fweights/aweights is not traced")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    x = asarray(m)
    if x.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    d = to_ember_dtype(dtype, "cov") or result_type(x, default_float())
    X = cast(x, d)
    X = X.reshape(1, -1) if X.ndim < 2 else X
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if y is not None:
        yt = asarray(y)
        if yt.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = cast(yt, d)
        Y = Y.reshape(1, -1) if Y.ndim < 2 else Y
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = ember.cat([X, Y], dim=0)
    if ddof is None:
        ddof = 0 if bias else 1
    avg = ember.mean(X, dim=1)
    fact = max(X.shape[1] - ddof, 0)
    X = X - avg.unsqueeze(1)
    Xh = ember.conj_physical(X).T if X.dtype.is_complex else X.T
    c = ember.matmul(X, Xh) * (1.0 / fact if fact else float("inf"))
    return c.squeeze() if c.numel() != 1 or c.ndim != 2 else c.reshape(())


def corrcoef(x, y=None, rowvar=True, bias=NoValue, ddof=NoValue, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = ember.diagonal(c)
    std = ember.sqrt(ember.real(d) if d.dtype.is_complex else d)
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.dtype.is_complex:
        return ember.complex(ember.clamp(c.real, -1, 1), ember.clamp(c.imag, -1, 1))
    return ember.clamp(c, -1, 1)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    yt = asarray(y)
    ax = norm_axis(axis, yt.ndim)
    n = yt.shape[ax]
    if x is None:
        d = dx
    else:
        xt = asarray(x)
        from ._misc import diff
        if xt.ndim == 1:
            d = diff(xt)
            shape = [1] * yt.ndim
            shape[ax] = d.shape[0]
            d = d.reshape(tuple(shape))
        else:
            d = diff(xt, axis=ax)
    hi = ember.narrow(yt, ax, 1, max(n - 1, 0))
    lo = ember.narrow(yt, ax, 0, max(n - 1, 0))
    terms = _u("true_divide")(_u("multiply")(d, _u("add")(hi, lo)), 2.0)
    from ._reductions import sum as np_sum
    return np_sum(terms, axis=ax)


def interp(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        raise Unsupported("numpy.interp(period=...) is not traced")
    xt, xpt, fpt = asarray(x), asarray(xp), asarray(fp)
    if xt.dtype.is_complex or xpt.dtype.is_complex:
        raise TypeError("Cannot cast array data from dtype('complex128') to "
                        "dtype('float64') according to the rule 'safe'")
    xt = cast(xt, default_float())
    if xpt.ndim != 1 or fpt.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xpt.shape[0] != fpt.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xpt.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    f = default_float()
    d = f.to_complex() if fpt.dtype.is_complex else f
    xpt, fpt = cast(xpt, f), cast(fpt, d)
    n = xpt.shape[0]
    j = ember.clamp(ember.searchsorted(xpt, xt, right=True) - 1, 0, max(n - 2, 0))
    def at(v, i):       # v[i] without indexing by a 0-d tensor (that would read it)
        return ember.index_select(v, 0, i.reshape(-1)).reshape(tuple(i.shape))

    x0, f0 = at(xpt, j), at(fpt, j)
    if n > 1:
        x1, f1 = at(xpt, j + 1), at(fpt, j + 1)
        slope = (f1 - f0) / (x1 - x0)
        r = slope * (xt - x0) + f0
        r = ember.where(xt == x1, f1, r)
    else:
        r = f0
    lval = fpt[0] if left is None else left
    rval = fpt[-1] if right is None else right
    r = ember.where(xt < xpt[0], lval, r)
    r = ember.where(xt > xpt[-1], rval, r)
    return cast(ember.broadcast_to(r, tuple(xt.shape)), d)


def _conv_full(a, v):
    """Full 1-d convolution as windows @ flipped kernel (exact for integer dtypes)."""
    m = v.shape[0]
    pad = ember.zeros((m - 1,), dtype=a.dtype)
    windows = ember.cat([pad, a, pad]).unfold(0, m, 1)
    if a.dtype is D.bool:
        return ember.matmul(windows.to(D.int64), ember.flip(v, (0,)).to(D.int64)) != 0
    return ember.matmul(windows, ember.flip(v, (0,)))


def _mode_slice(full, n, m, mode):
    if mode in ("full", "f"):
        return full
    big, small = max(n, m), min(n, m)
    if mode in ("same", "s"):
        start = (small - 1) // 2
        return full[start:start + big]
    if mode in ("valid", "v"):
        return full[small - 1:big]
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


def _conv_args(a, v, name):
    x, y = asarray(a), asarray(v)
    if x.ndim > 1 or y.ndim > 1:
        raise ValueError("object too deep for desired array")
    x, y = x.reshape(-1), y.reshape(-1)
    if x.shape[0] == 0:
        raise ValueError(f"{name}: a cannot be empty" if name == "convolve"
                         else "a cannot be empty")
    if y.shape[0] == 0:
        raise ValueError(f"{name}: v cannot be empty" if name == "convolve"
                         else "v cannot be empty")
    d = result_type(x, y)
    return cast(x, d), cast(y, d)


def convolve(a, v, mode="full"):
    x, y = _conv_args(a, v, "convolve")
    return _mode_slice(_conv_full(x, y), x.shape[0], y.shape[0], mode)


def correlate(a, v, mode="valid"):
    """c[k] = sum_n a[n+k] * conj(v[n]): the convolution with conj(v) reversed."""
    x, y = _conv_args(a, v, "correlate")
    yc = ember.conj_physical(y) if y.dtype.is_complex else y
    return _mode_slice(_conv_full(x, ember.flip(yc, (0,))), x.shape[0], y.shape[0], mode)


def i0(x):
    t = asarray(x)
    if t.dtype.is_complex:
        raise TypeError("i0 not supported for complex values")
    return ember.i0(cast(t, float_dtype_for(t.dtype)))


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(choicelist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    choices = [c if is_weak(c) else asarray(c) for c in choicelist]
    conds = [asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype is not D.bool:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    d = result_type(*choices, default)
    res = ember.full((), default, dtype=d) if not isinstance(default, Tensor) else cast(
        default, d)
    for c, v in zip(reversed(conds), reversed(choices)):
        v = cast(v, d) if isinstance(v, Tensor) else ember.full((), v, dtype=d)
        res = ember.where(c, v, res)
    shape = ember.broadcast_shapes(*[tuple(t.shape) for t in conds + [res]] + [
        tuple(v.shape) for v in choices if isinstance(v, Tensor)])
    return ember.broadcast_to(res, shape).clone()


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    e, t = asarray(element), asarray(test_elements)
    d = result_type(e, t)
    return ember.isin(cast(e, d), cast(t, d).reshape(-1), invert=invert)


def _indices(fn, n, k, m):
    idx = fn(n, n if m is None else m, k)
    return idx[0], idx[1]


def triu_indices(n, k=0, m=None):
    return _indices(ember.triu_indices, n, k, m)


def tril_indices(n, k=0, m=None):
    return _indices(ember.tril_indices, n, k, m)


def unravel_index(indices, shape, order="C"):
    if order != "C":
        raise Unsupported("numpy.unravel_index(order='F')")
    idx = asarray(indices)
    if idx.dtype._kind != 1:
        raise TypeError("only int indices permitted")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    out = []
    rest = cast(idx, D.int64)
    for s in reversed(shape):
        out.append(ember.remainder(rest, s))
        rest = ember.div(rest, s, rounding_mode="floor")
    return tuple(reversed(out))


def _cumulative(name, fn):
    def cumulative(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        check_out(name, out)
        t = asarray(x)
        if axis is None:
            if t.ndim > 1:
                raise ValueError("For arrays which have more than one dimension ``axis`` "
                                 "argument is required.")
            axis = 0
        if t.ndim == 0:
            raise ValueError(f"{name} requires input that is at least one dimensional")
        ax = norm_axis(axis, t.ndim)
        d = to_ember_dtype(dtype, name) or sum_dtype(t.dtype)
        r = fn(cast(t, d), dim=ax, dtype=d)
        if include_initial:
            shape = list(t.shape)
            shape[ax] = 1
            init = ember.full(tuple(shape), 0 if name == "cumulative_sum" else 1, dtype=d)
            r = ember.cat([init, r], dim=ax)
        return r
    cumulative.__name__ = name
    return cumulative


cumulative_sum = _cumulative("cumulative_sum", ember.cumsum)
cumulative_prod = _cumulative("cumulative_prod", ember.cumprod)


def vecdot(x1, x2, /, out=None, *, axis=-1, casting="same_kind", order="K", dtype=None,
           subok=True, axes=None, signature=None):
    check_out("vecdot", out)
    a, b = asarray(x1), asarray(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot: Input operand does not have enough dimensions")
    loop = np.vecdot.resolve_dtypes((a.dtype.np, b.dtype.np, None))
    d = to_ember_dtype(loop[0], "vecdot")
    a = ember.movedim(cast(a, d), norm_axis(axis, a.ndim), -1)
    b = ember.movedim(cast(b, d), norm_axis(axis, b.ndim), -1)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("vecdot: Input operand 1 has a mismatch in its core dimension 0")
    if d.is_complex:
        a = ember.conj_physical(a)
    if d is D.bool:
        return ember.any(a & b, dim=-1)
    return ember.sum(a * b, dim=-1, dtype=d)


def astype(x, dtype, /, *, copy=True, device=None):
    from ._ndarray import _m_astype
    return _m_astype(asarray(x), dtype, copy=copy)


def scalar_type(t):
    """np.float32(x) and friends: x cast to that type (truncating floats to ints, truth
    values to bool), as NumPy's scalar constructors cast arrays."""
    d = to_ember_dtype(t, t.__name__)

    def cast_to(x=0, /):
        from ._ndarray import _m_astype
        if isinstance(x, str):
            raise Unsupported(f"numpy.{t.__name__}(str)")
        return _m_astype(asarray(x), d, copy=True)
    cast_to.__name__ = t.__name__
    return cast_to


def isposinf(x, out=None):
    check_out("isposinf", out)
    t = asarray(x)
    if t.dtype.is_complex:
        raise TypeError("This operation is not supported for complex values because it "
                        "would be ambiguous.")
    if t.dtype._kind < 2:
        return ember.zeros(tuple(t.shape), dtype=D.bool)
    return ember.isposinf(t)


def isneginf(x, out=None):
    check_out("isneginf", out)
    t = asarray(x)
    if t.dtype.is_complex:
        raise TypeError("This operation is not supported for complex values because it "
                        "would be ambiguous.")
    if t.dtype._kind < 2:
        return ember.zeros(tuple(t.shape), dtype=D.bool)
    return ember.isneginf(t)
