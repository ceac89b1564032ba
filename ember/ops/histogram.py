"""Counting: bincount, histc, histogram (not differentiable, as in PyTorch).

Note: bins are chosen as PyTorch's CPU kernel does, so counts agree at bin edges:
histc maps x to int((x - min) * bins / (max - min)) in the input's dtype; histogram
with a bin count does the same and then corrects by comparing with its returned
edges (PyTorch's "linear interpolation with local search"); with an edges tensor it
binary-searches. The last bin includes its right edge; values outside are dropped.
"""
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._elementwise import write_out, type_name
from ._registry import register
from .reduction import return_type

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["bincount", "histc", "histogram"]


# ------------------------------------------------------------------ bincount

def _bincount_checks(dtype, ndim, minlength):
    if dtype._kind != 1:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{type_name(dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")


def _bincount_kernel(a, weights, minlength):
    _bincount_checks(D.from_numpy_dtype(a.dtype), a.ndim, minlength)
    if a.ndim == 1 and a.size == 0:
        return np.zeros(minlength, np.int64)
    if a.ndim != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64)
    if weights.ndim != 1 or weights.shape[0] != a.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(a, weights.astype(np.float64), minlength=minlength).astype(out)


def _bincount_meta(a, weights, minlength):
    _bincount_checks(a.dtype, a.dim(), minlength)
    from .indexing import _data_dependent
    _data_dependent("bincount", a)
    r = _bincount_kernel(a._data, None if weights is None else weights._data, minlength)
    return r.shape, D.from_numpy_dtype(r.dtype)


BINCOUNT = register("bincount", _bincount_kernel, meta=_bincount_meta,
                    tags=("prim", "dynamic_output_shape"),
                    schema="bincount(Tensor self, Tensor? weights=None, "
                           "SymInt minlength=0) -> Tensor")


def bincount(input, weights=None, minlength=0):
    return dispatch(BINCOUNT, (input, weights, minlength))


# ------------------------------------------------------------- shared binning

def _linear_bins(x, left, right, nb, edges=None):
    """Bin positions by linear interpolation in x's dtype (PyTorch's arithmetic); with
    `edges`, corrected by comparing x with the neighbouring edges."""
    dt = x.dtype
    with np.errstate(all="ignore"):
        pos = ((x - left) * dt.type(nb) / (right - left)).astype(np.int64)
    pos = np.clip(pos, 0, nb)
    if edges is not None:               # upper_bound over edges[pos-1 : pos+2]
        lo = np.maximum(pos - 1, 0)
        hi = np.minimum(pos + 2, nb + 1)
        count = np.zeros_like(pos)
        for off in range(3):
            j = lo + off
            count += (j < hi) & (edges[np.minimum(j, nb)] <= x)
        pos = lo + count - 1
    return pos


def _histogram_counts(x, pos, nb, weights, dtype):
    pos = np.where(pos == nb, nb - 1, pos)
    counts = np.bincount(pos, weights=None if weights is None else weights.astype(np.float64),
                         minlength=nb)
    return counts[:nb].astype(dtype)


def _in_range(a, left, right, weights=None):
    x = a.reshape(-1)
    keep = (x >= left) & (x <= right)
    return x[keep], None if weights is None else weights.reshape(-1)[keep]


# ---------------------------------------------------------------------- histc

def _histc_checks(dtype, bins):
    if dtype._kind != 2:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_name(dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _histc_range(a, lo, hi):
    lo, hi = float(lo), float(hi)
    if lo == hi and a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return lo, hi


def _histc_kernel(a, bins, min, max):
    _histc_checks(D.from_numpy_dtype(a.dtype), bins)
    lo, hi = _histc_range(a, min, max)
    edges = np.array([lo, hi], a.dtype)
    x, _ = _in_range(a, edges[0], edges[1])
    pos = _linear_bins(x, edges[0], edges[1], bins)
    return _histogram_counts(x, pos, bins, None, a.dtype)


def _histc_meta(a, bins, min, max):
    _histc_checks(a.dtype, bins)
    if a._backend != "meta":
        _histc_range(a._data, min, max)
    return (bins,), a.dtype


def _histc_decomp(a, bins=100, min=0, max=0):
    """Bin positions (x - lo) * bins / (hi - lo), truncated and clamped (the top edge goes
    to the last bin), counted by scatter_add of the in-range mask; min == max takes the
    data's range (widened by 1 when that is a single point), as the kernel."""
    from .. import _prims as P
    x = P._reshape_copy(a, [-1])
    if float(min) == float(max) and x.shape[0]:
        lo, hi = P.amin(x, (0,), False), P.amax(x, (0,), False)
    else:
        lo, hi = P.full((), float(min), a.dtype), P.full((), float(max), a.dtype)
    same = P.eq(lo, hi)
    lo, hi = P.where(same, P.sub(lo, 1), lo), P.where(same, P.add(hi, 1), hi)
    keep = P.logical_and(P.ge(x, lo), P.le(x, hi))
    pos = P._to_copy(P.div(P.mul(P.sub(x, lo), bins), P.sub(hi, lo)), D.int64)
    pos = P.where(keep, P.minimum(P.maximum(pos, 0), bins - 1), P.full((), 0, D.int64))
    return P.scatter_add(P.full([bins], 0, a.dtype), 0, pos, P._to_copy(keep, a.dtype))


HISTC = register("histc", _histc_kernel, meta=_histc_meta, check=True, tags=("reduction",),
                 decomp=_histc_decomp,
                 schema="histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor")


def histc(input, bins=100, min=0, max=0, *, out=None):
    res = dispatch(HISTC, (input, bins, min, max))
    return res if out is None else write_out(out, res, "histc")


# ------------------------------------------------------------------ histogram

def _linspace(lo, hi, steps, dtype):
    """torch.linspace's CPU formula in `dtype`: from the start, then back from the end."""
    start, end = dtype.type(lo), dtype.type(hi)
    step = (end - start) / dtype.type(steps - 1) if steps > 1 else dtype.type(0)
    i = np.arange(steps)
    half = steps // 2
    out = np.where(i < half, start + step * i.astype(dtype), end - step * (steps - i - 1)
                   .astype(dtype))
    return out.astype(dtype)


def _histogram_checks(a, bins, range, weight):
    """torch.histogramdd's argument checks (types, shapes, range)."""
    if a.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{type_name(a.dtype)}'")
    if isinstance(bins, Tensor):
        if bins.dtype is not a.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                               f"same dtype, but got input with dtype {a.dtype.np} and bins for "
                               f"dimension 0 with dtype {bins.dtype.np}")
        if bins.dim() != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.dim()} dimensions in the bins tensor for dimension 0")
        if bins.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, "
                               "but got 0 elements in the bins tensor for dimension 0")
    elif bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if weight is not None:
        if weight.dtype is not a.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and "
                               "weight tensor should have the same dtype, but got "
                               f"input({a.dtype.np}), and weight({weight.dtype.np})")
        if tuple(weight.shape) != tuple(a.shape):
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have "
                               "the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(a.shape) + [1]} and "
                               f"weight with shape {list(weight.shape)}")


def _outer_edges(a, range):
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
    elif a.size:
        lo, hi = float(np.min(a)), float(np.max(a))
    else:
        lo, hi = 0.0, 1.0     # PyTorch's default edges for an empty input
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo}, {hi}] is not finite")
    if lo > hi:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                           f"max {hi:g} for dimension 0")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _histogram_kernel(a, bins, range, weight, density):
    if isinstance(bins, np.ndarray):
        edges = bins.astype(a.dtype, copy=True)
        x, w = _in_range(a, edges[0], edges[-1], weight)
        pos = np.searchsorted(edges, x, side="right") - 1
    else:
        edges = _linspace(*_outer_edges(a, range), bins + 1, a.dtype)
        x, w = _in_range(a, edges[0], edges[-1], weight)
        pos = _linear_bins(x, edges[0], edges[-1], bins, edges)
    nb = len(edges) - 1
    hist = _histogram_counts(x, pos, nb, w, a.dtype)
    if density:
        with np.errstate(all="ignore"):
            hist = (hist / a.dtype.type(hist.sum())) / np.diff(edges)
    return hist.astype(a.dtype, copy=False), edges


def _histogram_meta(a, bins, range, weight, density):
    _histogram_checks(a, bins, range, weight)
    if a._backend != "meta" and not isinstance(bins, Tensor):
        _outer_edges(a._data, range)
    nb = bins.numel() - 1 if isinstance(bins, Tensor) else bins
    return ((nb,), a.dtype), ((nb + 1,), a.dtype)


# one op for aten's histogram.bin_ct and histogram.bins_tensor: `bins` may also be a Tensor
# of edges (then `range` is None)
def _histogram_decomp(a, bins=100, range=None, weight=None, density=False):
    """Edges (given, or torch.linspace's two-sided formula over the range in a's dtype),
    bin = searchsorted(edges, x, right) - 1 with the top edge in the last bin, counts (or
    weights) by scatter_add of the in-range mask; density divides by total and widths."""
    from .. import _prims as P
    x = P._reshape_copy(a, [-1])
    if isinstance(bins, Tensor):
        edges = P.clone(bins, None)
    else:
        if range is not None:
            lo, hi = (P.full((), float(v), a.dtype) for v in range)
        elif x.shape[0]:
            lo, hi = P.amin(x, (0,), False), P.amax(x, (0,), False)
        else:
            lo, hi = P.full((), 0.0, a.dtype), P.full((), 1.0, a.dtype)
        same = P.eq(lo, hi)
        lo, hi = P.where(same, P.sub(lo, 0.5), lo), P.where(same, P.add(hi, 0.5), hi)
        step = P.div(P.sub(hi, lo), bins)
        i = P.arange(0, 1, bins + 1, a.dtype)
        edges = P.where(P.lt(i, (bins + 1) // 2), P.add(lo, P.mul(step, i)),
                        P.sub(hi, P.mul(step, P.sub(bins, i))))
    nb = edges.shape[0] - 1
    keep = P.logical_and(P.ge(x, P.select(edges, 0, 0)), P.le(x, P.select(edges, 0, nb)))
    pos = P.sub(P.searchsorted(edges, x, False, True, None, None), 1)
    pos = P.where(keep, P.minimum(P.maximum(pos, 0), nb - 1), P.full((), 0, D.int64))
    w = P._to_copy(keep, a.dtype)
    if weight is not None:
        w = P.mul(w, P._reshape_copy(weight, [-1]))
    hist = P.scatter_add(P.full([nb], 0, a.dtype), 0, pos, w)
    if density:
        widths = P.sub(P.slice(edges, 0, 1, nb + 1, 1), P.slice(edges, 0, 0, nb, 1))
        hist = P.div(P.div(hist, P.sum(hist, None, False, None)), widths)
    return hist, edges


HISTOGRAM = register("histogram", _histogram_kernel, meta=_histogram_meta, check=True,
                     tags=("reduction",), decomp=_histogram_decomp,
                     schema="histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, "
                            "Tensor? weight=None, bool density=False) -> (Tensor hist, "
                            "Tensor bin_edges)")


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    if isinstance(bins, Tensor) and range is not None:
        raise TypeError("histogram() received an invalid combination of arguments - got "
                        "(Tensor, bins=Tensor, range=tuple), but expected (Tensor input, Tensor "
                        "bins, *, Tensor weight, bool density)")
    hist, edges = dispatch(HISTOGRAM, (input, bins, None if range is None else tuple(range),
                                       weight, density))
    if out is not None:
        hist = write_out(out[0], hist, "histogram")
        edges = write_out(out[1], edges, "histogram")
    return return_type("histogram", ("hist", "bin_edges"))(hist, edges)


def _make_methods():
    for f in (bincount, histc, histogram):
        METHODS[f.__name__] = f


_make_methods()
