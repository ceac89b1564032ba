"""numpy.histogram on Tensors, following NumPy's own algorithm step by step.

Note: the number of bins is always known from the arguments, so the result has a static
shape even when the edges come from the data (a.min()/a.max() stay tensors, not host
values). Equal bins use NumPy's index formula with its two edge corrections; given edges
use a sorted search with the last edge inclusive. Values outside the range count zero
(NumPy drops them). What NumPy checks on data values (non-finite autodetected range,
non-monotonic edge tensors, too many bins for the range) cannot be checked without reading
the data and is not.
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import Unsupported, asarray, cast, default_float, float_dtype_for, result_type


def _u(name):
    from ._ufuncs import make_ufunc
    return make_ufunc(getattr(np, name))


def _outer_edges(a, range):
    """First and last edge: Python numbers from `range`, else 0-d tensors from the data."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        return first, last
    if a.numel() == 0:
        return 0, 1
    first, last = ember.amin(a), ember.amax(a)
    same = first == last
    return (ember.where(same, _u("subtract")(first, 0.5), first),
            ember.where(same, _u("add")(last, 0.5), last))


def histogram(a, bins=10, range=None, density=None, weights=None):
    x = asarray(a).reshape(-1)
    w = None
    if weights is not None:
        w = asarray(weights)
        if tuple(w.shape) != tuple(asarray(a).shape):
            raise ValueError("weights should have the same shape as a.")
        w = w.reshape(-1)
    ntype = D.int64 if w is None else w.dtype
    if isinstance(bins, str):
        raise Unsupported("numpy.histogram with a bin estimator name")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        n = int(bins)
        if n < 1:
            raise ValueError("`bins` must be positive, when an integer")
        counts, edges = _equal_bins(x, w, n, range, ntype)
    else:
        edges = asarray(bins)
        if edges.ndim != 1:
            raise ValueError("`bins` must be 1d, when an array")
        if not isinstance(bins, Tensor):
            e = np.asarray(bins)
            if np.any(e[:-1] > e[1:]):
                raise ValueError("`bins` must increase monotonically, when an array")
        counts = _given_edges(x, w, edges, ntype)
    if density:
        db = cast(ember.diff(edges), default_float())
        return counts / db / counts.sum(), edges
    return counts, edges


def _equal_bins(x, w, n, range, ntype):
    first, last = _outer_edges(x, range)
    bin_type = float_dtype_for(result_type(first, last, x))
    from ._creation import linspace
    edges = linspace(first, last, n + 1, dtype=bin_type)
    keep = ember.logical_and(_u("greater_equal")(x, first), _u("less_equal")(x, last))
    t = cast(x, bin_type)
    denom = _u("subtract")(last, first)
    f = _u("multiply")(_u("true_divide")(_u("subtract")(t, first), denom), n)
    idx = ember.clamp(ember.trunc(ember.where(keep, f, 0)).to(D.int64), 0, n)
    idx = idx - (idx == n).to(D.int64)
    idx = idx - (t < edges[idx]).to(D.int64)
    idx = idx + ((t >= edges[idx + 1]) & (idx != n - 1)).to(D.int64)
    idx = ember.clamp(idx, 0, n - 1)
    ones = ember.ones_like(x, dtype=ntype) if w is None else w
    src = ember.where(keep, ones, ember.zeros((), dtype=ntype))
    counts = ember.zeros((n,), dtype=ntype).index_add(0, idx, src)
    return counts, edges


def _given_edges(x, w, edges, ntype):
    d = result_type(x, edges)
    xs, es = cast(x, d), cast(edges, d)
    if w is None:
        sa = ember.sort(xs).values
        cum = ember.cat([ember.searchsorted(sa, es[:-1]),
                         ember.searchsorted(sa, es[-1:], right=True)])
        return ember.diff(cast(cum, ntype))
    order = ember.argsort(xs, stable=True)
    sa, sw = xs[order], w[order]
    cw = ember.cat([ember.zeros((1,), dtype=ntype), ember.cumsum(sw, dim=0, dtype=ntype)])
    cum = ember.cat([ember.searchsorted(sa, es[:-1]),
                     ember.searchsorted(sa, es[-1:], right=True)])
    return ember.diff(cw[cum])
