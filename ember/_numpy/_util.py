"""Shared helpers: NumPy dtypes <-> ember dtypes, NEP 50 promotion, operands, axes.

Note: a Tensor here stands for an ndarray, so every dtype decision is NumPy's (NumPy 2,
NEP 50: Python int/float/complex are "weak" and take the array's precision; NumPy
scalars and 0-d arrays are strong). Dtype questions are answered by NumPy itself on
dtypes only (`np.result_type`, `ufunc.resolve_dtypes`) - never on data - so the
answer is exactly NumPy's and nothing reads tensor values, which a capture on fake
tensors could not do.
"""
import numbers
import sys

import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor

NoValue = np._NoValue
AxisError = np.exceptions.AxisError

_NUMPY_DEFAULTS = (D.float64, D.complex128, D.int64)


def numpy_defaults():
    """The (float, complex, int) dtypes NumPy's defaults become: NumPy's own float64,
    complex128, int64, unless ember._dynamo.config.numpy_default_float/_complex/_int
    (PyTorch's knobs for compiled NumPy code) name others."""
    cfg = sys.modules.get("ember._dynamo.config")
    if cfg is None:
        return _NUMPY_DEFAULTS
    names = (getattr(cfg, "numpy_default_float", "float64"),
             getattr(cfg, "numpy_default_complex", "complex128"),
             getattr(cfg, "numpy_default_int", "int64"))
    if names == ("float64", "complex128", "int64"):
        return _NUMPY_DEFAULTS
    return tuple(getattr(D, n) for n in names)


def default_float():
    return numpy_defaults()[0]


def defaulted(d, strong=()):
    """dtype d as NumPy chose it, where a float64/complex128/int64 that NumPy picked by
    default (no operand in `strong` has it) becomes the configured default instead."""
    f, c, i = numpy_defaults()
    if (f, c, i) is _NUMPY_DEFAULTS or d not in _NUMPY_DEFAULTS:
        return d
    strong = set(strong)
    if d is D.float64:
        return d if strong & {D.float64, D.complex128} else f
    if d is D.complex128:
        return d if strong & {D.float64, D.complex128} else c
    return d if D.int64 in strong else i


class Unsupported(NotImplementedError):
    """A NumPy call, argument or dtype that ember's NumPy tracing does not implement;
    ember.compile graph-breaks on it (the call then runs in real NumPy)."""


def to_ember_dtype(d, fn="numpy"):
    """`np.float32`, `"float32"`, `np.dtype("f4")`, `float`, an ember dtype -> ember dtype."""
    if d is None or isinstance(d, D.dtype):
        return d
    if d is float or d is int or d is complex:      # Python types: the defaults
        return defaulted(D._FROM_NP[np.dtype(d)])
    try:
        npd = np.dtype(d)
    except TypeError:
        raise TypeError(f"{fn}: data type {d!r} not understood") from None
    got = D._FROM_NP.get(npd)
    if got is None:
        raise Unsupported(f"{fn}: NumPy dtype {npd} has no ember dtype (ember has bool, uint8, "
                          "int8..int64, float16, bfloat16, float32, float64, complex64, "
                          "complex128)")
    return got


def to_numpy_dtype(d):
    """ember dtype -> the NumPy dtype an ndarray of it would have."""
    return d.np


def is_weak(x):
    """A Python int/float/complex (not bool): NEP 50 'weak' scalar."""
    return isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.generic))


def is_scalar(x):
    return isinstance(x, (bool, int, float, complex, np.generic))


def dtype_key(x):
    """What NumPy's dtype resolution takes for operand x: a dtype, or the Python type
    of a weak scalar."""
    if isinstance(x, Tensor):
        return x.dtype.np
    if isinstance(x, D.dtype):
        return x.np
    if isinstance(x, np.generic):
        return x.dtype
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, int):
        return int
    if isinstance(x, float):
        return float
    if isinstance(x, complex):
        return complex
    if isinstance(x, np.ndarray):
        return x.dtype
    raise TypeError(f"unsupported operand type {type(x).__name__}")


def result_type(*xs):
    """np.result_type of operands (tensors strong, Python scalars weak) as ember dtype."""
    keys = []
    for x in xs:
        if is_weak(x):
            keys.append(x)          # np.result_type takes Python scalars as weak values
        else:
            keys.append(dtype_key(x))
    return defaulted(to_ember_dtype(np.result_type(*keys)), strong_dtypes(xs))


def strong_dtypes(xs):
    """ember dtypes of the operands that fix their dtype (arrays, NumPy scalars, dtypes)."""
    out = []
    for x in xs:
        if isinstance(x, Tensor):
            out.append(x.dtype)
        elif isinstance(x, D.dtype):
            out.append(x)
        elif isinstance(x, (np.generic, np.ndarray)):
            out.append(D._FROM_NP.get(x.dtype))
    return out


def python_dtype(x, fn="numpy"):
    """The dtype np.asarray gives Python data x (a scalar or nested list), defaulted."""
    return defaulted(to_ember_dtype(np.asarray(x).dtype, fn))


def asarray(x, dtype=None, fn="numpy"):
    """Operand x as a Tensor (an ndarray constant or list is converted as np.asarray would
    convert it; a scalar becomes 0-d with NumPy's dtype for it)."""
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype is dtype else x.to(dtype)
    if isinstance(x, (list, tuple)) and any(isinstance(e, Tensor) for e in _flat(x)):
        return _stack_nested(x, dtype)
    if isinstance(x, np.generic):
        d = dtype or to_ember_dtype(x.dtype, fn)
        return ember.full((), x.item(), dtype=d)
    if is_scalar(x):
        d = dtype or python_dtype(x, fn)
        return ember.full((), x, dtype=d)
    arr = np.asarray(x)
    if arr.dtype == object:
        raise Unsupported(f"{fn}: object operand {type(x).__name__}")
    d = dtype or (to_ember_dtype(arr.dtype, fn) if isinstance(x, np.ndarray)
                  else python_dtype(arr, fn))
    return ember.tensor(arr, dtype=d)


def _flat(x):
    for e in x:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e


def _stack_nested(x, dtype):
    """np.array of a (nested) list holding tensors: stack with NumPy's promotion (in a
    list, Python scalars are strong: [f32 array, 1.0] -> float64)."""
    leaves = list(_flat(x))
    if dtype is None:
        dtype = defaulted(to_ember_dtype(np.result_type(*[
            e.dtype.np if isinstance(e, Tensor) else np.asarray(e).dtype for e in leaves])),
            [e.dtype for e in leaves if isinstance(e, Tensor)])

    def build(obj):
        if isinstance(obj, (list, tuple)):
            return ember.stack([build(e) for e in obj])
        return asarray(obj, dtype)
    return build(x)


def operands(xs, fn):
    """Turn ndarray constants / lists into Tensors; keep tensors and scalars."""
    out = []
    for x in xs:
        if isinstance(x, (Tensor, bool, int, float, complex, np.generic)):
            out.append(x)
        elif isinstance(x, numbers.Number):
            out.append(x)
        else:
            out.append(asarray(x, fn=fn))
    return out


def check_broadcast(xs):
    """NumPy's ValueError when the operands' shapes do not broadcast (ember raises
    RuntimeError from inside the op)."""
    shapes = [tuple(x.shape) for x in xs if isinstance(x, Tensor)]
    if len(shapes) < 2:
        return
    nd = max(len(s) for s in shapes)
    for i in range(1, nd + 1):
        sizes = {s[-i] for s in shapes if len(s) >= i and s[-i] != 1}
        if len(sizes) > 1:
            raise ValueError("operands could not be broadcast together with shapes "
                             + " ".join(str(s).replace(" ", "") for s in shapes) + " ")


def cast(x, d):
    """Tensor x in dtype d (x itself when it already is)."""
    return x if x.dtype is d else x.to(d)


def check_out(fn, out):
    if out is not None:
        raise Unsupported(f"numpy.{fn}(out=...) is not supported when tracing NumPy code")


def norm_axis(axis, ndim, fn=None):
    """One axis in [0, ndim) (NumPy's AxisError otherwise)."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
    a = int(axis)
    if a < -ndim or a >= ndim:
        raise AxisError(a, ndim)
    return a + ndim if a < 0 else a


def norm_axes(axis, ndim, fn=None):
    """axis=None -> all axes; int or tuple -> sorted tuple of distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(norm_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("duplicate value in 'axis'")
        return axes
    return (norm_axis(axis, ndim),)


def shape_tuple(shape):
    """NumPy shape argument (int or sequence) -> tuple of ints."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if isinstance(shape, Tensor):
        raise Unsupported("a shape given as an array would be a host read")
    return tuple(int(s) if isinstance(s, np.integer) else s for s in shape)


def float_dtype_for(d):
    """The float dtype NumPy computes mean/var/linalg in for dtype d (ints and bool ->
    float64; float and complex kept)."""
    return d if d.is_floating_point or d.is_complex else default_float()


def sum_dtype(d):
    """np.add.reduce's default accumulator: bool and small signed ints -> int64."""
    if d is D.bool or (d._kind == 1 and d.is_signed):
        return defaulted(D.int64, [d])
    if d is D.uint8:
        raise Unsupported("numpy sums uint8 into uint64, which ember has no dtype for")
    return d
