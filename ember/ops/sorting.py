"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
quantile, nanquantile, unique, unique_consecutive, searchsorted, bucketize.

Note: ember's sort is always stable: equal elements keep their input order, also for
`stable=False` (PyTorch's unstable sort may order ties differently; the values agree).
NaN is the largest value, as in PyTorch: last ascending, first descending.
Which index a tie reports: sort/argsort/median/nanmedian as PyTorch (stable order);
kthvalue replays PyTorch's quickselect on rows whose k-th value is tied. Where PyTorch's
pick comes from libstdc++'s std::nth_element/std::sort, ember keeps a stable rule and
only the values agree: topk takes ties in index order, mode reports the value's last
occurrence (as PyTorch on rows of up to 16), nanmedian of an all-NaN row reports its
first NaN, unique's inverse numbers repeated NaNs in input order, unique(dim=) sorts
slices holding NaN with NaN last.
quantile/nanquantile are compositions of ember ops (sort, gather, where), as in PyTorch,
so their gradients (also w.r.t. a tensor q) follow from those ops.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor, _wrap_dim
from ._elementwise import write_out, type_name
from ._registry import register, export
from .reduction import return_type, _evenly_distribute_vjp

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = []


# ------------------------------------------------------------------------- helpers

def _key(a):
    """The array NumPy sorts in PyTorch's order: half precision compares as float32."""
    if a.dtype == np.float16 or a.dtype == D.bfloat16.np:
        return a.astype(np.float32)
    return a


def _ember_dtype(x):
    return x._dtype if isinstance(x, Tensor) else D.from_numpy_dtype(x.dtype)


def _not_implemented_for(x, kinds, kernel_name):
    """PyTorch's AT_DISPATCH error for dtype kinds (0 bool, 3 complex) a kernel lacks."""
    d = _ember_dtype(x)
    if d._kind in kinds:
        raise NotImplementedError(f'"{kernel_name}" not implemented for \'{type_name(d)}\'')


def _refuse(x, kinds, opname):
    """sort/topk refuse complex (and topk bool) with a RuntimeError, as PyTorch's cpu kernels."""
    d = _ember_dtype(x)
    if d._kind in kinds:
        what = "bool" if d._kind == 0 else "complex"
        raise RuntimeError(f"{opname} does not support {what} dtypes on CPU")


def _argsort(a, axis, descending):
    """Stable argsort along axis; descending keeps ties in input order (NaN first)."""
    a = _key(a)
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    idx = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return np.ascontiguousarray(np.flip(n - 1 - idx, axis))   # no negative strides


def _rows(a, dim):
    """a with `dim` moved last, as a (rows, n) array."""
    b = np.moveaxis(a, dim, -1)
    return b.reshape(-1, b.shape[-1])


def _unrows(r, shape, dim, keepdim):
    """A per-row result back to the reduced shape (keepdim keeps `dim` as size 1)."""
    batch = tuple(s for i, s in enumerate(shape) if i != dim)
    r = r.reshape(batch)
    return np.expand_dims(r, dim) if keepdim else r


def _reduced(shape, dim, keepdim):
    shape = tuple(shape)
    if not shape:
        return ()
    if keepdim:
        return shape[:dim] + (1,) + shape[dim + 1:]
    return shape[:dim] + shape[dim + 1:]


def _check_nonempty_dim(shape, dim, opname):
    if shape and shape[dim] == 0:
        raise IndexError(f"{opname}(): Expected reduction dim {dim} to have non-zero size.")


def _index_out(out, res, opname):
    """out= for an index result: PyTorch wants exactly int64 there."""
    if isinstance(out, Tensor) and out._dtype is not res._dtype:
        raise RuntimeError(f"{opname}(): Expected out tensor to have dtype long int, but got "
                           f"{out._dtype.np.name} instead")
    return write_out(out, res, opname)


def _pair_out(name, values, indices, out):
    """(values, indices) as torch.return_types.<name>, written to out=(v, i) if given."""
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{name}(): argument 'out' must be a tuple of 2 Tensors")
        values = write_out(out[0], values, name)
        indices = _index_out(out[1], indices, name)
    return return_type(name, ("values", "indices"))(values, indices)


def _check_int(x, name, opname, pos):
    if isinstance(x, bool) or not (isinstance(x, int) or hasattr(x, "__index__")):
        raise TypeError(f"{opname}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(x).__name__}")
    return int(x.__index__())


def _scatter_back(g, idx, shape, dim, keepdim):
    """PyTorch's value_selecting_reduction_backward: g lands at the selected indices."""
    from .creation import zeros
    if not shape:
        return g
    if not keepdim and g.dim() < len(shape):
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return zeros(shape, dtype=g.dtype).scatter(dim, idx, g)


# ---------------------------------------------------------------------------- sort

def _sort_kernel(a, dim, descending, stable):
    _refuse(a, (3,), "Sort")
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = _argsort(a, dim, descending)
    return np.take_along_axis(a, idx, dim), idx.astype(np.int64, copy=False)


def _sort_meta(a, dim, descending, stable):
    _refuse(a, (3,), "Sort")
    return (tuple(a.shape), a.dtype), (tuple(a.shape), D.int64)


def _sort_vjp(ctx, g, _gi=None):
    _, dim, _, _ = ctx.args
    return (_scatter_back(g, ctx.out[1], ctx.shapes[0], dim, True), None, None, None)


SORT = register("sort", _sort_kernel, meta=_sort_meta, vjp=_sort_vjp, save=(), save_out=True,
                nondiff_outputs=(1,), tags=("prim", "gather"),
                schema="sort.stable(Tensor self, int dim=-1, bool descending=False, *, "
                       "bool? stable) -> (Tensor values, Tensor indices)")


def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Sorted values and their indices along dim; always a stable sort (see the module)."""
    d = _wrap_dim(dim, input._data.ndim, "sort")
    values, indices = dispatch(SORT, (input, d, bool(descending), True))
    return _pair_out("sort", values, indices, out)


def argsort(input, dim=-1, descending=False, *, stable=False, out=None):
    res = sort(input, dim, descending, stable=stable).indices
    return res if out is None else _index_out(out, res, "argsort")


def msort(input, *, out=None):
    res = sort(input, 0).values
    return res if out is None else write_out(out, res, "msort")


# ---------------------------------------------------------------------------- topk

def _check_topk(a, k, dim):
    _refuse(a, (0, 3), "topk")
    n = a.shape[dim] if len(a.shape) else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")


def _topk_kernel(a, k, dim, largest, sorted):
    _check_topk(a, k, dim)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    idx = np.take(_argsort(a, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(a, idx, dim), idx.astype(np.int64, copy=False)


def _topk_meta(a, k, dim, largest, sorted):
    _check_topk(a, k, dim)
    shape = tuple(a.shape)
    if shape:
        shape = shape[:dim] + (k,) + shape[dim + 1:]
    return (shape, a.dtype), (shape, D.int64)


def _topk_vjp(ctx, g, _gi=None):
    dim = ctx.args[2]
    return (_scatter_back(g, ctx.out[1], ctx.shapes[0], dim, True), None, None, None, None)


TOPK = register("topk", _topk_kernel, meta=_topk_meta, vjp=_topk_vjp, save=(), save_out=True,
                nondiff_outputs=(1,), tags=("prim", "reduction"),
                schema="topk(Tensor self, SymInt k, int dim=-1, bool largest=True, "
                       "bool sorted=True) -> (Tensor values, Tensor indices)")


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The k largest (smallest) values along dim; ties are taken in index order."""
    k = _check_int(k, "k", "topk", 2)
    d = _wrap_dim(dim, input._data.ndim, "topk")
    values, indices = dispatch(TOPK, (input, k, d, bool(largest), bool(sorted)))
    return _pair_out("topk", values, indices, out)


# ------------------------------------------------------------------------ kthvalue

def _check_kthvalue(a, k, dim):
    _not_implemented_for(a, (0, 3), "kthvalue_cpu")
    shape = tuple(a.shape)
    _check_nonempty_dim(shape, dim, "kthvalue")
    n = shape[dim] if shape else 1
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")


def _torch_quickselect(values, k):
    """The index PyTorch's quick_select_template (ATen SortingUtils.h) leaves at k."""
    arr, idx = list(values), list(range(len(values)))

    def gt(x, y):                 # greater, NaN largest
        return (x != x and y == y) or x > y

    def swap(i, j):
        arr[i], arr[j] = arr[j], arr[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(arr) - 1
    while hi > lo:
        if hi == lo + 1:
            if gt(arr[lo], arr[hi]):
                swap(lo, hi)
            break
        swap(lo + (hi - lo) // 2, lo + 1)       # median of three as the pivot
        if gt(arr[lo + 1], arr[hi]):
            swap(lo + 1, hi)
        if gt(arr[lo], arr[hi]):
            swap(lo, hi)
        if gt(arr[lo + 1], arr[lo]):
            swap(lo + 1, lo)
        i, j, piv = lo + 1, hi, arr[lo]
        while True:
            i += 1
            while gt(piv, arr[i]):
                i += 1
            j -= 1
            while gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _kthvalue_kernel(a, k, dim, keepdim):
    _check_kthvalue(a, k, dim)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    rows = _rows(a, dim)
    key = _key(rows)
    pick = np.argsort(key, axis=-1, kind="stable")[:, k - 1]
    r = np.arange(rows.shape[0])
    vals = key[r, pick]
    nan = vals != vals
    ties = np.where(nan, np.isnan(key).sum(-1) if key.dtype.kind == "f" else 0,
                    (key == vals[:, None]).sum(-1)) > 1
    for row in np.flatnonzero(ties):              # PyTorch's pick among tied values
        pick[row] = _torch_quickselect(key[row].tolist(), k - 1)
    return (_unrows(rows[r, pick], a.shape, dim, keepdim),
            _unrows(pick.astype(np.int64), a.shape, dim, keepdim))


def _kthvalue_meta(a, k, dim, keepdim):
    _check_kthvalue(a, k, dim)
    shape = _reduced(a.shape, dim, keepdim)
    return (shape, a.dtype), (shape, D.int64)


def _select_vjp(ctx, g, _gi=None):
    """kthvalue/median/mode with dim: the gradient goes to the reported index."""
    dim, keepdim = ctx.args[-2], ctx.args[-1]
    gi = _scatter_back(g, ctx.out[1], ctx.shapes[0], dim, keepdim)
    return (gi,) + (None,) * (len(ctx.args) - 1)


def _sorted_pick(x, dim, pos, keepdim):
    """(values, indices) at sorted position `pos` (an int, or a tensor laid along dim)."""
    from .. import _prims as P
    v, i = P.sort(x, dim, False, True)
    if isinstance(pos, int):
        v, i = P.select(v, dim, pos), P.select(i, dim, pos)
        if keepdim:
            v, i = P.unsqueeze(v, dim), P.unsqueeze(i, dim)
        return v, i
    v, i = P.gather(v, dim, pos, False), P.gather(i, dim, pos, False)
    if not keepdim:
        v, i = P.squeeze(v, [dim]), P.squeeze(i, [dim])
    return v, i


def _kthvalue_decomp(x, k, dim=-1, keepdim=False):
    """The (k-1)-th entry of the stable ascending sort along dim."""
    if x.dim() == 0:
        raise NotImplementedError("kthvalue decomposition: 0-d input")
    return _sorted_pick(x, dim % x.dim(), k - 1, keepdim)


KTHVALUE = register("kthvalue", _kthvalue_kernel, meta=_kthvalue_meta, vjp=_select_vjp,
                    save=(), save_out=True, nondiff_outputs=(1,), tags=("reduction",),
                    decomp=_kthvalue_decomp,
                    schema="kthvalue(Tensor self, SymInt k, int dim=-1, "
                           "bool keepdim=False) -> (Tensor values, Tensor indices)")


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest value along dim (k counts from 1) and its index."""
    k = _check_int(k, "k", "kthvalue", 2)
    d = _wrap_dim(dim, input._data.ndim, "kthvalue")
    values, indices = dispatch(KTHVALUE, (input, k, d, bool(keepdim)))
    return _pair_out("kthvalue", values, indices, out)


# ------------------------------------------------------------- median / nanmedian

def _median_pos(key, ignore_nan):
    """Per row of a sorted (rows, n) key: the lower median's position (NaN rules of PyTorch:
    median -> the first NaN if any; nanmedian -> among non-NaN values, NaN if none)."""
    n = key.shape[-1]
    valid = n - (np.isnan(key).sum(-1) if key.dtype.kind == "f" else np.zeros(key.shape[:-1],
                                                                              np.int64))
    if ignore_nan:
        return np.maximum((valid - 1) // 2, 0)
    return np.where(valid < n, valid, (n - 1) // 2)


def _empty_median(dtype):
    """The median of no elements: NaN converted to the dtype, as PyTorch's cpu kernel."""
    if dtype.kind == "f" or dtype == D.bfloat16.np:
        return np.full((), np.nan, dtype)
    return np.full((), np.iinfo(dtype).min if dtype.itemsize >= 4 else 0, dtype)


def _median_full_kernel(ignore_nan):
    def kernel(a):
        _not_implemented_for(a, (0, 3), "median_cpu")
        if a.size == 0:
            return _empty_median(a.dtype)
        flat = a.reshape(-1)
        order = np.argsort(_key(flat), kind="stable")
        pos = _median_pos(_key(flat)[order][None], ignore_nan)[0]
        return np.asarray(flat[order[pos]])
    return kernel


def _median_full_meta(a):
    _not_implemented_for(a, (0, 3), "median_cpu")
    return (), a.dtype


def _median_dim_kernel(ignore_nan, name):
    def kernel(a, dim, keepdim):
        _not_implemented_for(a, (0, 3), "median_out")
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        _check_nonempty_dim(a.shape, dim, name)
        rows = _rows(a, dim)
        order = np.argsort(_key(rows), axis=-1, kind="stable")
        r = np.arange(rows.shape[0])
        if rows.shape[0] == 0:
            pick = np.zeros(0, np.int64)
        else:
            pick = order[r, _median_pos(np.take_along_axis(_key(rows), order, -1), ignore_nan)]
        return (_unrows(rows[r, pick], a.shape, dim, keepdim),
                _unrows(pick.astype(np.int64), a.shape, dim, keepdim))
    return kernel


def _median_dim_meta(name):
    def meta(a, dim, keepdim):
        _not_implemented_for(a, (0, 3), "median_out")
        _check_nonempty_dim(tuple(a.shape), dim, name)
        shape = _reduced(a.shape, dim, keepdim)
        return (shape, a.dtype), (shape, D.int64)
    return meta


def _median_dim_decomp(nan_ignoring):
    """median: the lower middle of the sort, NaN (at its first position) where a NaN is;
    nanmedian: the lower middle of the non-NaN entries (NaNs sort last)."""
    def decomp(x, dim, keepdim=False):
        from .. import _prims as P
        if x.dim() == 0:
            raise NotImplementedError("median decomposition: 0-d input")
        dim = dim % x.dim()
        n = x.shape[dim]
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            return _sorted_pick(x, dim, (n - 1) // 2, keepdim)
        nan = P.isnan(x)
        if nan_ignoring:
            count = P.sum(P.logical_not(nan), (dim,), True, D.int64)
            pos = P.maximum(P.floor_divide(P.sub(count, 1), 2), 0)
            return _sorted_pick(x, dim, pos, keepdim)
        v, i = _sorted_pick(x, dim, (n - 1) // 2, keepdim)
        has = P.any(nan, (dim,), keepdim)
        first = P.argmax(P._to_copy(nan, D.int64), dim, keepdim)
        return P.where(has, P.full((), float("nan"), x.dtype), v), P.where(has, first, i)
    return decomp


def _median_decomp(nan_ignoring):
    """median()/nanmedian() of every element: the dim version on the flattened input."""
    def decomp(x):
        from .. import _prims as P
        return _median_dim_decomp(nan_ignoring)(P._reshape_copy(x, [-1]), 0, False)[0]
    return decomp


MEDIAN = register("median", _median_full_kernel(False), meta=_median_full_meta,
                  vjp=_evenly_distribute_vjp, save_out=True, tags=("reduction",),
                  decomp=_median_decomp(False), schema="median(Tensor self) -> Tensor")
NANMEDIAN = register("nanmedian", _median_full_kernel(True), meta=_median_full_meta,
                     vjp=_evenly_distribute_vjp, save_out=True, tags=("reduction",),
                     decomp=_median_decomp(True), schema="nanmedian(Tensor self) -> Tensor")
MEDIAN_DIM = register("median_dim", _median_dim_kernel(False, "median"),
                      meta=_median_dim_meta("median"), vjp=_select_vjp, save=(),
                      save_out=True, nondiff_outputs=(1,), tags=("reduction",),
                      decomp=_median_dim_decomp(False),
                      schema="median.dim(Tensor self, int dim, "
                             "bool keepdim=False) -> (Tensor values, Tensor indices)")
NANMEDIAN_DIM = register("nanmedian_dim", _median_dim_kernel(True, "nanmedian"),
                         meta=_median_dim_meta("nanmedian"), vjp=_select_vjp, save=(),
                         save_out=True, nondiff_outputs=(1,), tags=("reduction",),
                         decomp=_median_dim_decomp(True),
                         schema="nanmedian.dim(Tensor self, int dim, "
                                "bool keepdim=False) -> (Tensor values, Tensor indices)")


def _median_call(name, full_op, dim_op, input, dim, keepdim, out):
    if dim is None:
        if keepdim or out is not None:       # only median(input, dim, ...) has these
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        res = dispatch(full_op, (input,))
        return res if out is None else write_out(out, res, name)
    d = _wrap_dim(dim, input._data.ndim, name)
    values, indices = dispatch(dim_op, (input, d, bool(keepdim)))
    return _pair_out(name, values, indices, out)


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median: of all elements (one value), or along dim (values, indices).
    NaN propagates (use nanmedian to ignore it)."""
    return _median_call("median", MEDIAN, MEDIAN_DIM, input, dim, keepdim, out)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """median ignoring NaN; NaN only where a row is all NaN."""
    return _median_call("nanmedian", NANMEDIAN, NANMEDIAN_DIM, input, dim, keepdim, out)


# ---------------------------------------------------------------------------- mode

def _mode_kernel(a, dim, keepdim):
    _not_implemented_for(a, (3,), "mode_cpu")
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    _check_nonempty_dim(a.shape, dim, "mode")
    rows = _rows(a, dim)
    m, n = rows.shape
    if m == 0:
        return (_unrows(rows[:, 0], a.shape, dim, keepdim),
                _unrows(np.zeros(0, np.int64), a.shape, dim, keepdim))
    order = np.argsort(_key(rows), axis=-1, kind="stable")
    s = np.take_along_axis(rows, order, -1)
    start = np.ones((m, n), bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]            # NaN != NaN: each NaN counts once
    run = np.cumsum(start, axis=-1) - 1 + (np.arange(m) * n)[:, None]
    freq = np.bincount(run.ravel(), minlength=m * n)[run]
    best = np.argmax(freq, axis=-1)                   # first run of the top count: smallest
    r = np.arange(m)
    last = best + freq[r, best] - 1                   # the run's last (stable) element
    return (_unrows(s[r, best], a.shape, dim, keepdim),
            _unrows(order[r, last].astype(np.int64), a.shape, dim, keepdim))


def _mode_meta(a, dim, keepdim):
    _not_implemented_for(a, (3,), "mode_cpu")
    _check_nonempty_dim(tuple(a.shape), dim, "mode")
    shape = _reduced(a.shape, dim, keepdim)
    return (shape, a.dtype), (shape, D.int64)


def _mode_decomp(x, dim=-1, keepdim=False):
    """As the kernel: stable sort, runs of equal values (a NaN is a run of its own), each
    element's run length by scatter_add + gather, the first longest run (the smallest
    value), the last of its elements in stable order as the index; value read at it."""
    from .. import _prims as P
    if x.dim() == 0:
        return P.clone(x, None), P.full((), 0, D.int64)
    d = dim % x.dim()
    n = x.shape[d]
    v, order = P.sort(x, d, False, True)
    first = P.full([1 if i == d else s for i, s in enumerate(x.shape)], True, D.bool)
    new = P.ne(P.slice(v, d, 1, n, 1), P.slice(v, d, 0, n - 1, 1))
    run = P.sub(P.cumsum(P._to_copy(P.cat([first, new], d), D.int64), d, None), 1)
    ones = P.full(list(x.shape), 1, D.int64)
    freq = P.gather(P.scatter_add(P.full(list(x.shape), 0, D.int64), d, run, ones), d, run,
                    False)
    best = P.argmax(freq, d, True)
    last = P.sub(P.add(best, P.gather(freq, d, best, False)), 1)
    idx = P.gather(order, d, last, False)
    val = P.gather(x, d, idx, False)
    if not keepdim:
        val, idx = P.squeeze(val, [d]), P.squeeze(idx, [d])
    return val, idx


MODE = register("mode", _mode_kernel, meta=_mode_meta, vjp=_select_vjp, save=(),
                save_out=True, nondiff_outputs=(1,), tags=("reduction",),
                decomp=_mode_decomp,
                schema="mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, "
                       "Tensor indices)")


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along dim (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    d = _wrap_dim(dim, input._data.ndim, "mode")
    values, indices = dispatch(MODE, (input, d, bool(keepdim)))
    return _pair_out("mode", values, indices, out)


export(__all__, sort, argsort, msort, topk, kthvalue, median, nanmedian, mode)


# ---------------------------------------------------------- quantile / nanquantile

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _ceil(x):
    return -((-x).floor())


def _round_half_even(x):
    """round() of the ranks as C's nearbyint: halves go to the even neighbour."""
    r = x.floor()
    f = x - r
    return r + ((f > 0.5) | ((f == 0.5) & (r % 2 == 1)))


def _lerp(start, end, weight):
    """PyTorch's lerp formula (exact at both ends); differentiable in all three."""
    from .indexing import where
    diff = end - start
    return where(weight < 0.5, start + weight * diff, end - diff * (1 - weight))


def _quantile_q(name, input, q):
    """q as a tensor of input's dtype (0-d for a number), after PyTorch's checks."""
    from .creation import tensor
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        return q
    if isinstance(q, bool) or not isinstance(q, (int, float)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"{type(q).__name__}), but expected (Tensor input, Tensor q) or "
                        "(Tensor input, float q)")
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    return tensor(float(q), dtype=input._dtype)


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan, out):
    """PyTorch's quantile_impl in ember ops: sort, pick ranks, gather and interpolate."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    qt = _quantile_q(name, input, q)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if input._dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if qt._dtype is not input._dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if isinstance(q, Tensor) and not ((q._data >= 0) & (q._data <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    ndim = input.dim()
    if dim is not None and ndim == 0:
        _wrap_dim(dim, 0, name)
        input = input.reshape(1)
        dim = 0
    if dim is None:
        out_shape = (1,) * ndim if keepdim else ()
        ordered = sort(input.reshape(-1)).values
    else:
        d = _wrap_dim(dim, ndim, name)
        out_shape = _reduced(input.shape, d, keepdim) if ndim else ()
        moved = input if d == input.dim() - 1 else input.unsqueeze(-1).transpose(d, -1)
        ordered = sort(moved).values
    ordered = ordered.reshape(out_shape + (ordered.shape[-1],))
    last = ordered.shape[-1] - 1
    nan = ordered.isnan()
    if ignore_nan:
        ranks = qt * (nan.logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        from .indexing import where
        ranks = where(nan.any(-1, keepdim=True), float(last), qt * last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = _ceil(ranks)
    elif interpolation == "nearest":
        ranks = _round_half_even(ranks)
    below = ranks.long()
    res = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        from .creation import full_like
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        res = _lerp(res, ordered.gather(-1, _ceil(ranks).long()), weights)
    res = res.squeeze(-1) if qt.dim() == 0 else res.unsqueeze(0).transpose(0, -1).squeeze(-1)
    return res if out is None else write_out(out, res, name)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles along dim (all elements for dim=None); NaN propagates."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile ignoring NaN; NaN only where a row is all NaN."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True, out)


# ----------------------------------------------------- unique / unique_consecutive

def _from_runs(s, order, start):
    """(values, inverse, counts) from sorted (or original) rows `s` whose runs begin at
    `start`; `order` maps each row of s back to its input position."""
    run = np.cumsum(start) - 1
    inverse = np.empty(len(order), np.int64)
    inverse[order] = run
    counts = np.diff(np.append(np.flatnonzero(start), len(order))).astype(np.int64)
    return s[start], inverse, counts


def _unique_flat(a, consecutive):
    flat = a.reshape(-1)
    order = np.arange(flat.size) if consecutive else np.argsort(_key(flat), kind="stable")
    s = flat[order]
    start = np.ones(flat.size, bool)
    start[1:] = s[1:] != s[:-1]                      # NaN != NaN: each NaN is its own value
    values, inverse, counts = _from_runs(s, order, start)
    return values, inverse.reshape(a.shape), counts


def _unique_dim(a, dim, consecutive):
    """unique over the slices a.select(dim, i), compared whole; lexicographic order."""
    if any(s == 0 for i, s in enumerate(a.shape) if i != dim):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    b = np.moveaxis(a, dim, 0)
    n = b.shape[0]
    rows = b.reshape(n, int(np.prod(b.shape[1:], dtype=np.int64)))
    if consecutive or n == 0:
        order = np.arange(n)
    else:
        order = np.lexsort(_key(rows).T[::-1])        # stable; column 0 is the primary key
    s = rows[order]
    start = np.ones(n, bool)
    start[1:] = (s[1:] != s[:-1]).any(-1)
    values, inverse, counts = _from_runs(s, order, start)
    values = np.moveaxis(values.reshape((-1,) + b.shape[1:]), 0, dim)
    return np.ascontiguousarray(values), inverse, counts


def _unique_kernel(a, sorted, return_inverse, return_counts, dim):
    _not_implemented_for(a, (3,), "unique")
    return _unique_flat(a, False) if dim is None else _unique_dim(a, dim, False)


def _unique_consecutive_kernel(a, return_inverse, return_counts, dim):
    _not_implemented_for(a, (3,), "unique")
    return _unique_flat(a, True) if dim is None else _unique_dim(a, dim, True)


def _dynamic_meta(opname, kernel):
    """Shapes that depend on the values: computed from real inputs, refused for meta ones."""
    def meta(a, *args):
        from .indexing import _data_dependent
        _not_implemented_for(a, (3,), "unique")
        _data_dependent(opname, a)
        outs = kernel(a._data, *args)
        return tuple((o.shape, D.from_numpy_dtype(o.dtype)) for o in outs)
    return meta


def _no_derivative(aten_name):
    """PyTorch records unique's node, but its backward is not implemented."""
    def vjp(ctx, *grads):
        name = aten_name if ctx.args[-1] is None or aten_name != "_unique2" else "unique_dim"
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return vjp


UNIQUE = register("unique", _unique_kernel, meta=_dynamic_meta("unique", _unique_kernel),
                  vjp=_no_derivative("_unique2"), save=(), nondiff_outputs=(1, 2),
                  tags=("prim", "dynamic_output_shape"),
                  schema="unique(Tensor self, bool sorted=True, bool return_inverse=False, "
                         "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)")
UNIQUE_CONSECUTIVE = register(
    "unique_consecutive", _unique_consecutive_kernel,
    meta=_dynamic_meta("unique_consecutive", _unique_consecutive_kernel),
    vjp=_no_derivative("unique_consecutive"), save=(), nondiff_outputs=(1, 2),
    tags=("prim", "dynamic_output_shape"),
                              schema="unique_consecutive(Tensor self, bool return_inverse=False, "
                                     "bool return_counts=False, int? dim=None) -> (Tensor, "
                                     "Tensor, Tensor)")


def _unique_dim_arg(input, dim, opname):
    if dim is None:
        return None
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, input.dim(), opname)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    res = (values,) + ((inverse,) if return_inverse else ()) + \
        ((counts,) if return_counts else ())
    return res[0] if len(res) == 1 else res


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along dim), in ascending order; NaNs stay distinct.
    PyTorch's cpu kernels sort for sorted=False too, and so does ember."""
    d = _unique_dim_arg(input, dim, "unique")
    outs = dispatch(UNIQUE, (input, bool(sorted), bool(return_inverse), bool(return_counts), d))
    return _unique_result(*outs, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapses runs of equal consecutive elements (or slices along dim)."""
    d = _unique_dim_arg(input, dim, "unique_consecutive")
    outs = dispatch(UNIQUE_CONSECUTIVE, (input, bool(return_inverse), bool(return_counts), d))
    return _unique_result(*outs, return_inverse, return_counts)


# ------------------------------------------------------- searchsorted / bucketize

class _Operand:
    """A NumPy array (or number) seen as a tensor by D.result_dtype."""

    def __init__(self, a):
        self._data = a
        self._dtype = D.from_numpy_dtype(a.dtype)


def _as_array(x):
    """searchsorted's Scalar input becomes a 0-d tensor (float64/int64/bool), as in ATen."""
    if isinstance(x, (np.ndarray, Tensor)):
        return x._data if isinstance(x, Tensor) else x
    if isinstance(x, bool):
        return np.asarray(x)
    return np.asarray(x, np.int64 if isinstance(x, int) else np.float64)


def _check_searchsorted(seq, values, sorter):
    """PyTorch's searchsorted_pre_check, on arrays."""
    p = "torch.searchsorted(): "
    if sorter is not None:
        if sorter.shape != seq.shape:
            raise RuntimeError(f"{p}boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)}and got sorter tensor "
                               f"{list(sorter.shape)}")
        if sorter.dtype != np.int64:
            raise RuntimeError(f"{p}sorter must be a tensor of long dtype but got dtype "
                               f"{type_name(D.from_numpy_dtype(sorter.dtype))}")
        if sorter.size and (sorter.min() < 0 or sorter.max() >= seq.shape[-1]):
            raise RuntimeError(f"{p}sorter index out of range")
    if values.ndim == 0 and seq.ndim != 1:
        raise RuntimeError(f"{p}input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) and "
                           f"input value's dim(0) numel(1)")
    if seq.ndim == 0:
        raise RuntimeError(f"{p}boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim > 1 and (seq.ndim != values.ndim or seq.shape[:-1] != values.shape[:-1]):
        raise RuntimeError(f"{p}boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {list(seq.shape)} and input value "
                           f"tensor {list(values.shape)}")
    for a in (seq, values):
        _not_implemented_for(a, (0, 3), "searchsorted_out_cpu")


def _searchsorted_kernel(seq, values, out_int32, right, side, sorter):
    values = _as_array(values)
    _check_searchsorted(seq, values, sorter)
    common = D.compute_dtype(D.result_dtype((_Operand(seq), _Operand(values)))).np
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    seq, values = seq.astype(common, copy=False), values.astype(common, copy=False)
    side = side or ("right" if right else "left")
    if seq.ndim == 1:
        res = np.searchsorted(seq, values, side)
    else:
        s2, v2 = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        res = np.stack([np.searchsorted(s, v, side) for s, v in zip(s2, v2)]) \
            if len(s2) else np.zeros(v2.shape, np.int64)
        res = res.reshape(values.shape)
    return np.asarray(res, np.int32 if out_int32 else np.int64)


def _searchsorted_meta(seq, values, out_int32, right, side, sorter):
    if not isinstance(values, Tensor):
        values = _as_array(values)
    _check_searchsorted(seq, values, sorter._data if sorter is not None else None)
    return tuple(values.shape), D.int32 if out_int32 else D.int64


SEARCHSORTED = register("searchsorted", _searchsorted_kernel, meta=_searchsorted_meta,
                        tags=("prim", "reduction"),
                        schema="searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, "
                               "bool out_int32=False, bool right=False, str? side=None, "
                               "Tensor? sorter=None) -> Tensor")


def _searchsorted_out(res, out, out_int32):
    if out is None:
        return res
    if isinstance(out, Tensor) and out._dtype is not res._dtype:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only "
                           "be Int(int32) or Long(int64) depending on whether out_int32 flag is "
                           f"True, but we got output tensor's dtype {type_name(out._dtype)} and "
                           f"out_int32 flag is {out_int32}")
    return write_out(out, res, "searchsorted")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Insertion indices of `input` into the sorted innermost dim of sorted_sequence
    (side='right'/right=True: after equal elements)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError("torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
    res = dispatch(SEARCHSORTED, (sorted_sequence, input, bool(out_int32), bool(right), side,
                                  sorter))
    return _searchsorted_out(res, out, out_int32)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each input element for 1-D boundaries: searchsorted(boundaries, input)."""
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim"
                           f"({boundaries.dim()})")
    res = dispatch(SEARCHSORTED, (boundaries, input, bool(out_int32), bool(right), None, None))
    return _searchsorted_out(res, out, out_int32)


export(__all__, quantile, nanquantile, unique, unique_consecutive, searchsorted, bucketize)


def _make_methods():
    for f in (sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, quantile,
              nanquantile, unique, unique_consecutive):
        METHODS[f.__name__] = f


_make_methods()
