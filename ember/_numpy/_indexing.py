"""ndarray indexing on a Tensor: `a[index]` and `a[index] = value` with NumPy's rules.

Note: ember's Tensor indexing already follows NumPy's basic and advanced indexing rules
(PyTorch copied them); what differs is handled here: negative slice steps (`a[::-1]`,
refused by PyTorch) become a flip plus a positive-step slice, index lists and ndarray
constants become index tensors, NumPy integer scalars become ints, and assigned values are
cast to the array's dtype as NumPy's unsafe setitem cast does. `a[::-1]` is a copy here
where NumPy gives a view: writing through it later does not reach `a`.
"""
import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import Unsupported, asarray, cast


def _norm_item(i):
    if isinstance(i, (bool, np.bool_)):
        raise Unsupported("indexing with a Python bool")
    if isinstance(i, np.integer):
        return int(i)
    if isinstance(i, (list, np.ndarray)):
        return asarray(i)
    if isinstance(i, Tensor) and i.dtype._kind > 1:
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if isinstance(i, float):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                         "(`None`) and integer or boolean arrays are valid indices")
    return i


def _consumed(i):
    """How many array dimensions index element i consumes."""
    if i is None:
        return 0
    if isinstance(i, Tensor) and i.dtype is D.bool:
        return i.ndim
    return 1


def _expand(x, index):
    index = index if isinstance(index, tuple) else (index,)
    index = [_norm_item(i) for i in index]
    n_ell = sum(1 for i in index if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(i) for i in index if i is not Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{used} were indexed")
    if n_ell:
        k = index.index(Ellipsis)
        index[k:k + 1] = [slice(None)] * (x.ndim - used)
    return index


def _negative_steps(x, index):
    """Rewrite negative-step slices as flips of x plus positive-step slices."""
    dim = 0
    out = []
    for i in index:
        if isinstance(i, slice) and i.step is not None and i.step < 0:
            n = x.shape[dim]
            start, stop, step = i.indices(n)
            count = len(range(start, stop, step))
            x = ember.flip(x, (dim,))
            first = n - 1 - start if count else 0
            out.append(slice(first, first + (count - 1) * -step + 1 if count else 0, -step))
        else:
            if isinstance(i, slice) and i.step == 0:
                raise ValueError("slice step cannot be zero")
            out.append(i)
        dim += _consumed(i)
    return x, tuple(out)


def getitem(a, index):
    """`a[index]` with NumPy's semantics."""
    x = asarray(a)
    idx = _expand(x, index)
    x, idx = _negative_steps(x, idx)
    if x.ndim == 0 and idx == ():
        return x
    return x[idx if len(idx) != 1 else idx[0]]


def setitem(a, index, value):
    """`a[index] = value`: value cast to a's dtype (NumPy's unsafe cast), written in place
    into a (which is returned)."""
    if not isinstance(a, Tensor):
        raise TypeError("setitem target must be a Tensor standing for an ndarray")
    idx = _expand(a, index)
    dim = 0
    fixed = []
    for i in idx:
        if isinstance(i, slice) and i.step is not None and i.step < 0:
            adv = sum(1 for j in idx if isinstance(j, Tensor))
            if adv:
                raise Unsupported("assignment through a negative-step slice combined with "
                                  "array indices")
            rng = range(*i.indices(a.shape[dim]))
            i = ember.tensor(list(rng), dtype=D.int64) if len(rng) else slice(0, 0)
        fixed.append(i)
        dim += _consumed(i)
    if isinstance(value, Tensor):
        v = cast(value, a.dtype)
    elif isinstance(value, (list, tuple, np.ndarray, np.generic)):
        v = cast(asarray(value), a.dtype)
    else:
        v = np.asarray(value).astype(a.dtype.np).item()
    a[tuple(fixed) if len(fixed) != 1 else fixed[0]] = v
    return a
