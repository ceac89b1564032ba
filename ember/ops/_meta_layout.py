"""Output strides for meta and fake tensors, without data.

Note: the fake run must report the strides ember's *real* kernels produce. Those
are NumPy's: pointwise kernels allocate their output in NumPy's order='K' layout
(the inputs' stride order, as PyTorch's TensorIterator also does), view kernels
compute strides from the input's, and the rest (reductions over other shapes,
matmul, cat, factories) return C-contiguous arrays. So layouts are asked of NumPy
itself, on stand-ins that cost no memory:

- views run the view kernel on a probe: an `as_strided` array with the meta
  input's shape, strides and offset over a zero buffer of the input's extent
  (`np.zeros` is calloc: untouched pages are never mapped; a view reads nothing);
- order='K' layouts come from `np.nditer`'s output allocation on tiny probes
  (every size >1 clipped to 2, strides replaced by their rank), whose axis order
  gives the full-size strides.
"""
import numpy as np

from .._tensor import Tensor, _contiguous_strides

_PROBE_LIMIT = 1 << 40     # bytes of address space a view probe may reserve


def meta_strides(t):
    """A meta or real tensor's element strides."""
    return tuple(t.stride())


def view_probe(t):
    """(array, base pointer): an array with t's shape/strides/offset over zeros."""
    shape, strides, off = tuple(t._data.shape), meta_strides(t), t.storage_offset()
    isz = t._data.itemsize
    extent = off + 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides) if n > 0)
    if extent * isz > _PROBE_LIMIT:
        raise NotImplementedError(f"fake: view of a meta tensor spanning {extent} elements "
                                  "is too large to probe")
    buf = _zeros(extent, t._data.dtype)
    arr = np.lib.stride_tricks.as_strided(buf[off:], shape, tuple(s * isz for s in strides))
    return arr, buf.__array_interface__["data"][0]


_ZEROS = {}          # dtype -> a read-only zero buffer reused by small probes
_ZEROS_MAX = 1 << 23     # elements: larger probes get a fresh (calloc, untouched) buffer


def _zeros(n, dtype):
    if n > _ZEROS_MAX:
        return np.zeros(n, dtype)
    buf = _ZEROS.get(dtype)
    if buf is None or buf.size < n:
        buf = np.zeros(max(n, 1 << 12), dtype)
        buf.flags.writeable = False     # a probe is never written through
        _ZEROS[dtype] = buf
    return buf[:n]


def probe_geometry(arr, base):
    """(strides, offset) in elements of a view kernel's output over a probe."""
    isz = arr.itemsize
    if arr.size == 0:
        return None, 0
    off = (arr.__array_interface__["data"][0] - base) // isz
    return tuple(s // isz for s in arr.strides), off


def _rank_strides(shape, strides):
    """Strides with the same order (ties and zeros kept) but small values."""
    uniq = sorted({abs(s) for n, s in zip(shape, strides) if s})
    rank = {s: 1 << i for i, s in enumerate(uniq)}
    return tuple(rank[abs(s)] if s else 0 for s in strides)


def k_order_strides(shape, tensors):
    """The strides NumPy's order='K' output of `shape` gets from these inputs
    (each broadcastable to `shape`), as a ufunc allocates it; None if C-contiguous."""
    shape = tuple(int(n) for n in shape)
    nd = len(shape)
    if nd < 2 or 0 in shape:
        return None
    small = tuple(1 if n == 1 else 2 for n in shape)
    probes = []
    for t in tensors:
        tshape = tuple(int(n) for n in t._data.shape)
        if len(tshape) > nd:
            continue
        pad = (1,) * (nd - len(tshape)) + tshape
        if any(a != 1 and a != b for a, b in zip(pad, shape)):
            continue
        st = (0,) * (nd - len(tshape)) + meta_strides(t)
        st = tuple(0 if a == 1 and b != 1 else s for a, b, s in zip(pad, shape, st))
        st = _rank_strides(shape, st)
        pshape = tuple(1 if a == 1 else 2 for a in pad)
        extent = 1 + sum((n - 1) * s for n, s in zip(pshape, st))
        probes.append(np.lib.stride_tricks.as_strided(np.zeros(extent, np.uint8), pshape, st))
    if not probes:
        return None
    it = np.nditer(probes + [None], flags=["zerosize_ok", "refs_ok"],
                   op_flags=[["readonly"]] * len(probes) + [["writeonly", "allocate"]],
                   op_dtypes=[np.uint8] * (len(probes) + 1), order="K")
    out = it.operands[-1]
    assert out.shape == small, (out.shape, small)
    return _recover(out.strides, shape)


def _recover(out_strides, shape):
    """Full-size strides from a tiny probe output's strides (same axis order);
    None when that is C order. Among equal strides a size-1 axis is the faster."""
    nd = len(shape)
    order = sorted(range(nd), key=lambda i: (out_strides[i], shape[i] != 1))
    st, acc = [0] * nd, 1
    for i in order:
        st[i] = acc
        acc *= shape[i]
    st = tuple(st)
    return None if st == _contiguous_strides(shape) else st


def _tiny(t):
    """A stand-in for t: sizes >1 clipped to 2, strides replaced by their rank."""
    shape = tuple(int(n) for n in t._data.shape)
    pshape = tuple(min(n, 2) for n in shape)
    st = _rank_strides(shape, meta_strides(t))
    isz = t._data.itemsize
    extent = 1 + sum((n - 1) * s for n, s in zip(pshape, st))
    return np.lib.stride_tricks.as_strided(np.zeros(extent, t._data.dtype), pshape,
                                           tuple(s * isz for s in st))


def probe_strides(op, args, index, shape):
    """Output `index`'s strides from the kernel run on tiny stand-ins of the inputs
    (NumPy's layouts, e.g. advanced indexing's, depend on the inputs' layout and
    the op's arguments, not on the sizes); None: C order; _NO_PROBE: no answer."""
    def conv(a):
        if isinstance(a, Tensor):
            return _tiny(a)
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return type(a)(conv(x) for x in a)
        return a
    try:
        with np.errstate(all="ignore"):
            res = op.kernels["cpu"](*[conv(a) for a in args])
    except Exception:       # sizes the op's arguments rely on
        return _NO_PROBE
    out = res[index] if isinstance(res, (tuple, list)) else res
    small = tuple(min(int(n), 2) for n in shape)
    if not isinstance(out, np.ndarray) or out.shape != small or out.size == 0:
        return _NO_PROBE
    return _recover(out.strides, shape)


_NO_PROBE = object()     # the tiny run did not give the output's clipped shape


def output_strides(op, args, index, shape, tensors):
    """Strides of a non-view op's output `index`: the kernel's own layout on tiny
    stand-ins of the inputs where that run gives the output's (clipped) shape.
    Else: C order for random ops (their kernels draw into fresh C arrays, and the
    probe must not draw), order='K' for pointwise ops and outputs of the first
    input's shape, the first input's axis order for ops marked `meta_layout =
    "first"` (NumPy's concatenate keeps it), C-contiguous otherwise."""
    if not tensors or len(shape) < 2 or 0 in shape:
        return None
    how = op.meta_layout
    if how == "contiguous" or "random" in op.tags:
        return None
    if how is None and "gather" not in op.tags and all(t._mstrides is None for t in tensors):
        return None     # C-order inputs give C order (but NumPy's advanced indexing)
    if how is None:
        st = probe_strides(op, args, index, shape)
        if st is not _NO_PROBE:
            return st
    if "pointwise" in op.tags:
        return k_order_strides(shape, tensors)
    first = tensors[0]
    if how == "first" and first._data.ndim == len(shape):
        perm = k_order_strides(tuple(first._data.shape), [first])
        return None if perm is None else _recover(perm, shape)
    if tuple(first._data.shape) == tuple(shape):
        return k_order_strides(shape, [first])
    return None
