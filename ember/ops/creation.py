"""Tensor creation: tensor/as_tensor/from_numpy, full/zeros/ones/empty, ranges, eye.

Note: factories with no tensor inputs are registry ops too (`full`, `arange`,
`linspace`, `eye`), so recording modes see them; converting Python data
(`tensor`) is not an op, it is a constant.
"""
import builtins
import math

import numpy as np

from .. import _dtype as D
from .._device import check_supported
from .._dispatch import dispatch
from .._tensor import Tensor, wrap, Size
from ._registry import register

_FREE = {}  # placeholder for readability of factories below


def _size(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s)
        if not isinstance(s, (int, np.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"expected a sequence of integers as size, but got "
                            f"{type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _finish(t, requires_grad, device):
    if device is not None:
        check_supported(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _fill_dtype(fill_value, dtype):
    if dtype is not None:
        return dtype
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    return D.scalar_dtype(fill_value)


FULL = register("full", lambda size, fill_value, dtype: np.full(size, fill_value, dtype.np),
                tags=("factory",))
EMPTY = register("empty", lambda size, dtype: np.empty(size, dtype.np), tags=("factory",))


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    size = _size((size,) if isinstance(size, int) else (size,))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dtype = _fill_dtype(fill_value, dtype)
    t = dispatch(FULL, (size, fill_value, dtype))
    return _finish(t, requires_grad, device)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    dtype = dtype or D.get_default_dtype()
    t = dispatch(FULL, (_size(size), 0, dtype))
    return _finish(t, requires_grad, device)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, memory_format=None):
    dtype = dtype or D.get_default_dtype()
    t = dispatch(FULL, (_size(size), 1, dtype))
    return _finish(t, requires_grad, device)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    dtype = dtype or D.get_default_dtype()
    t = dispatch(EMPTY, (_size(size), dtype))
    return _finish(t, requires_grad, device)


def _like(fn):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        return fn(input.shape, *args, dtype=dtype or input.dtype, requires_grad=requires_grad,
                  device=device)
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
full_like = _like(full)


def _range_dtype(vals, dtype):
    if dtype is not None:
        return dtype
    if builtins.any(isinstance(v, float) or (isinstance(v, Tensor) and v.is_floating_point())
                    for v in vals):
        return D.get_default_dtype()
    return D.int64


def _arange_kernel(start, end, step, dtype):
    n = math.ceil((end - start) / step)
    return (start + np.arange(max(n, 0), dtype=np.float64 if dtype._kind >= 2 else np.int64)
            * step).astype(dtype.np)


ARANGE = register("arange", _arange_kernel, tags=("factory",))


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    dtype = _range_dtype((start, end, step), dtype)
    if step == 0:
        raise RuntimeError("arange(): step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("arange(): upper bound and larger bound inconsistent with step sign")
    t = dispatch(ARANGE, (start, end, step, dtype))
    return _finish(t, requires_grad, device)


def _linspace_kernel(start, end, steps, dtype):
    if dtype._kind < 2:
        return np.linspace(start, end, steps).astype(dtype.np)
    cd = np.complex128 if dtype._kind == 3 else np.float64
    return np.linspace(start, end, steps, dtype=cd).astype(dtype.np)


LINSPACE = register("linspace", _linspace_kernel, tags=("factory",))


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    if dtype is None:
        dtype = D.default_complex() if builtins.any(isinstance(v, complex) for v in (start, end)) \
            else D.get_default_dtype()
    t = dispatch(LINSPACE, (start, end, steps, dtype))
    return _finish(t, requires_grad, device)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    dtype = dtype or D.get_default_dtype()
    exps = linspace(start, end, steps, dtype=D.float64)
    t = wrap(np.power(float(base), exps._data).astype(dtype.np), dtype)
    return _finish(t, requires_grad, device)


EYE = register("eye", lambda n, m, dtype: np.eye(n, m, dtype=dtype.np), tags=("factory",))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    if m is None:
        m = n
    if n < 0 or m < 0:
        raise RuntimeError(f"eye(): n and m must be non-negative, got {n} and {m}")
    t = dispatch(EYE, (n, m, dtype or D.get_default_dtype()))
    return _finish(t, requires_grad, device)


# ----------------------------------------------------------------- from Python data

def _infer(data):
    """The dtype PyTorch infers for nested Python data."""
    kind = -1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kind = builtins.max(kind, x.dtype._kind + 10 * 0)
            if x.dtype._kind >= 2:
                return None  # resolved by promotion below
        elif isinstance(x, builtins.bool) or isinstance(x, np.bool_):
            kind = builtins.max(kind, 0)
        elif isinstance(x, (int, np.integer)):
            kind = builtins.max(kind, 1)
        elif isinstance(x, (float, np.floating)):
            kind = builtins.max(kind, 2)
        elif isinstance(x, (complex, np.complexfloating)):
            kind = 3
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    return {-1: D.get_default_dtype(), 0: D.bool, 1: D.int64, 2: D.get_default_dtype(),
            3: D.default_complex()}[kind]


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        arr = data._data
        return arr.astype(dtype.np) if dtype is not None else np.array(arr), \
            dtype or data.dtype
    if isinstance(data, np.ndarray):
        d = dtype or D.from_numpy_dtype(data.dtype)
        return np.array(data, dtype=d.np), d
    if isinstance(data, (list, tuple)) and builtins.any(isinstance(x, Tensor) for x in _flat(data)):
        arrs = _nested_tensors(data)
        d = dtype
        if d is None:
            d = D.result_dtype([x for x in _flat(data) if isinstance(x, Tensor)]) or _infer(data)
        return np.array(arrs, dtype=d.np), d
    d = dtype or _infer(data)
    if isinstance(data, np.generic):
        d = dtype or D.from_numpy_dtype(data.dtype)
    try:
        arr = np.array(data, dtype=d.np if d._kind != 2 or d is D.float32 or d is D.float64
                       else np.float64)
    except ValueError as e:
        raise ValueError(f"tensor(): {e}") from None
    if arr.dtype == object:
        raise ValueError("tensor(): expected a sequence of numbers with a regular shape")
    return arr.astype(d.np, copy=False), d


def _flat(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _flat(y)
    else:
        yield x


def _nested_tensors(x):
    if isinstance(x, (list, tuple)):
        return [_nested_tensors(y) for y in x]
    return x._data if isinstance(x, Tensor) else x


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    arr, d = _to_array(data, dtype)
    t = wrap(np.ascontiguousarray(arr) if arr.ndim else arr, d)
    if isinstance(data, Tensor) and device is None:
        t._device = data._device           # PyTorch 1.7: keep the input's device
    return _finish(t, requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        if dtype is None or dtype is data.dtype:
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (ember did not allocate it: not counted)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = D.from_numpy_dtype(ndarray.dtype)
    from .._memory import _Storage
    t = Tensor.__new__(Tensor)
    t._data, t._dtype, t._storage = ndarray, d, _Storage(0)
    return t


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or D.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def _install():
    T = Tensor

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def _new(fn):
        def m(self, *size, dtype=None, device=None, requires_grad=False, **kw):
            return fn(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)
        return m

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    T.new_tensor = new_tensor
    T.new_zeros = _new(zeros)
    T.new_ones = _new(ones)
    T.new_empty = _new(empty)
    T.new_full = new_full


_install()
