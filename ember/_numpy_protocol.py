"""NumPy interop: `np.asarray(t)`, and NumPy ufuncs/functions on ember Tensors.

Note: `__array__` hands NumPy the tensor's array (as `Tensor.numpy()` does).
`__array_ufunc__` and `__array_function__` route NumPy calls that involve an ember
Tensor to ember functions, so the result is an ember Tensor and autograd sees it
(np.exp(t), np.add(t, 1), ndarray + t, np.sum(t, axis=0)). NumPy argument names
are translated (axis -> dim, keepdims -> keepdim, ddof -> correction, dtype ->
ember dtype); ndarray operands become tensors (so a float64 array promotes like a
float64 tensor) and NumPy scalars become Python numbers. The ember functions are
looked up by name at call time. NumPy features ember has no counterpart for
(`out=`, `where=`, ufunc methods like `reduce`, unmapped functions) raise TypeError
naming the function.
"""
import numpy as np

from . import _dtype as D
from ._tensor import Tensor

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

_UFUNCS = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div",
    "divide": "div", "floor_divide": "floor_divide", "remainder": "remainder",
    "fmod": "fmod", "power": "pow", "float_power": "float_power", "negative": "neg",
    "positive": "positive", "absolute": "abs", "fabs": "abs", "sign": "sign",
    "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log2": "log2",
    "log10": "log10", "log1p": "log1p", "sqrt": "sqrt", "square": "square",
    "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin",
    "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "sinh": "sinh", "cosh": "cosh",
    "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "deg2rad": "deg2rad", "rad2deg": "rad2deg", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "rint": "round", "maximum": "maximum", "minimum": "minimum",
    "fmax": "fmax", "fmin": "fmin", "equal": "eq", "not_equal": "ne", "less": "lt",
    "less_equal": "le", "greater": "gt", "greater_equal": "ge", "logical_and": "logical_and",
    "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "invert": "bitwise_not", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "isnan": "isnan", "isinf": "isinf",
    "isfinite": "isfinite", "signbit": "signbit", "copysign": "copysign", "hypot": "hypot",
    "logaddexp": "logaddexp", "logaddexp2": "logaddexp2", "heaviside": "heaviside",
    "conjugate": "conj", "matmul": "matmul", "nextafter": "nextafter", "gcd": "gcd",
    "lcm": "lcm",
}


def _ember(name, np_name):
    import ember
    fn = getattr(ember, name, None)
    if fn is None:
        raise TypeError(f"numpy.{np_name}() on an ember Tensor maps to ember.{name}, which "
                        "ember does not provide")
    return fn


def to_ember(x):
    """An operand NumPy handed us, as ember sees it."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        from .ops.creation import from_numpy
        return from_numpy(x)
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (list, tuple)):
        from .ops.creation import tensor
        return tensor(x)
    return x


def _dtype(d):
    if d is None or isinstance(d, D.dtype):
        return d
    return D.from_numpy_dtype(np.dtype(d))


def __array__(self, dtype=None, copy=None):
    a = self.numpy()
    if dtype is not None and np.dtype(dtype) != a.dtype:
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested "
                             f"(ember {self.dtype} -> numpy {np.dtype(dtype)})")
        return a.astype(dtype)
    return a.copy() if copy else a


def _no_out(out):
    return out is None or (isinstance(out, tuple) and all(o is None for o in out))


_UFUNC_KWARGS = {"out", "where", "casting", "order", "subok", "signature"}


def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    name = ufunc.__name__
    if method != "__call__":
        raise TypeError(f"numpy.{name}.{method}() is not supported on ember Tensors; use the "
                        f"ember reduction/function instead")
    bad = [k for k in kwargs if k in _UFUNC_KWARGS and not (k == "out" and _no_out(kwargs[k]))]
    if bad:
        raise TypeError(f"numpy.{name}(): argument '{bad[0]}' is not supported with ember "
                        "Tensors")
    target = _UFUNCS.get(name)
    if target is None:
        raise TypeError(f"numpy.{name}() is not supported on ember Tensors")
    fn = _ember(target, name)
    args = [to_ember(x) for x in inputs]
    try:
        res = fn(*args)
    except TypeError:
        # NumPy takes scalars everywhere; some torch functions (maximum, logical_and)
        # want tensors: a 0-d tensor promotes like the scalar would.
        if all(isinstance(a, Tensor) for a in args):
            raise
        from .ops.creation import tensor
        res = fn(*[a if isinstance(a, Tensor) else tensor(a) for a in args])
    dt = _dtype(kwargs.get("dtype"))
    return res if dt is None else res.to(dt)


def __array_function__(self, func, types, args, kwargs):
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    mod = func.__module__ or "numpy"
    key = func.__name__ if mod == "numpy" else mod.removeprefix("numpy.") + "." + func.__name__
    handler = _FUNCS.get(key)
    if handler is None:
        raise TypeError(f"numpy.{key}() is not supported on ember Tensors; convert with "
                        f"t.detach().numpy() first or use the ember function")
    return handler(*args, **kwargs)


# ------------------------------------------------------------------ numpy functions
# Each takes NumPy's signature and calls the ember function with PyTorch's names.

_FUNCS = {}


def _np(*names):
    def deco(f):
        for n in names:
            _FUNCS[n] = f
        return f
    return deco


def _reject(npname, **given):
    for k, v in given.items():
        if v is not None and v is not np._NoValue:
            raise TypeError(f"numpy.{npname}(): argument '{k}' is not supported with ember "
                            "Tensors")


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _reduction(npname, ename, with_dtype=True):
    def handler(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        _reject(npname, out=out, initial=initial, where=where)
        kw = {"dtype": _dtype(dtype)} if with_dtype and dtype is not None else {}
        fn = _ember(ename, npname)
        a = to_ember(a)
        if axis is None:
            res = fn(a, **kw)
            return res.reshape((1,) * a.ndim) if keepdims else res
        return fn(a, _axis(axis), bool(keepdims), **kw)
    return handler


_FUNCS["sum"] = _reduction("sum", "sum")
_FUNCS["mean"] = _reduction("mean", "mean")
_FUNCS["prod"] = _reduction("prod", "prod")


@_np("max", "amax")
def _amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("max", out=out, initial=initial, where=where)
    return _ember("amax", "max")(to_ember(a), () if axis is None else _axis(axis), bool(keepdims))


@_np("min", "amin")
def _amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _reject("min", out=out, initial=initial, where=where)
    return _ember("amin", "min")(to_ember(a), () if axis is None else _axis(axis), bool(keepdims))


def _arg(npname):
    def handler(a, axis=None, out=None, *, keepdims=False):
        _reject(npname, out=out)
        return _ember(npname, npname)(to_ember(a), axis, bool(keepdims))
    return handler


_FUNCS["argmax"] = _arg("argmax")
_FUNCS["argmin"] = _arg("argmin")


def _moment(npname):
    def handler(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
                mean=None, correction=None):
        _reject(npname, out=out, where=where, mean=mean, dtype=dtype)
        corr = ddof if correction is None else correction
        return _ember(npname, npname)(to_ember(a), _axis(axis), correction=corr,
                                      keepdim=bool(keepdims))
    return handler


_FUNCS["std"] = _moment("std")
_FUNCS["var"] = _moment("var")


def _logical(npname):
    def handler(a, axis=None, out=None, keepdims=False, *, where=None):
        _reject(npname, out=out, where=where)
        fn = _ember(npname, npname)
        a = to_ember(a)
        if axis is None:
            res = fn(a)
            return res.reshape((1,) * a.ndim) if keepdims else res
        return fn(a, _axis(axis), bool(keepdims))
    return handler


_FUNCS["all"] = _logical("all")
_FUNCS["any"] = _logical("any")


def _cumulative(npname):
    def handler(a, axis=None, dtype=None, out=None):
        _reject(npname, out=out)
        a = to_ember(a)
        if axis is None:
            a, axis = a.reshape(-1), 0
        return _ember(npname, npname)(a, axis, dtype=_dtype(dtype))
    return handler


_FUNCS["cumsum"] = _cumulative("cumsum")
_FUNCS["cumprod"] = _cumulative("cumprod")


@_np("reshape")
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    _reject("reshape", copy=copy)
    if order != "C":
        raise TypeError(f"numpy.reshape(): order='{order}' is not supported with ember Tensors")
    shape = newshape if shape is None else shape
    return _ember("reshape", "reshape")(to_ember(a), (shape,) if isinstance(shape, int) else
                                        tuple(shape))


@_np("ravel")
def _ravel(a, order="C"):
    return _reshape(a, (-1,), order)


@_np("transpose")
def _transpose(a, axes=None):
    a = to_ember(a)
    return _ember("permute", "transpose")(a, tuple(reversed(range(a.ndim))) if axes is None
                                          else tuple(axes))


@_np("swapaxes")
def _swapaxes(a, axis1, axis2):
    return _ember("transpose", "swapaxes")(to_ember(a), axis1, axis2)


@_np("moveaxis")
def _moveaxis(a, source, destination):
    return _ember("movedim", "moveaxis")(to_ember(a), _axis(source), _axis(destination))


@_np("squeeze")
def _squeeze(a, axis=None):
    a = to_ember(a)
    return _ember("squeeze", "squeeze")(a) if axis is None else \
        _ember("squeeze", "squeeze")(a, _axis(axis))


@_np("expand_dims")
def _expand_dims(a, axis):
    a = to_ember(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    n = a.ndim + len(axes)
    for ax in sorted(ax % n for ax in axes):
        a = _ember("unsqueeze", "expand_dims")(a, ax)
    return a


@_np("concatenate", "concat")
def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting=None):
    _reject("concatenate", out=out, casting=casting)
    ts = [to_ember(x) for x in arrays]
    if axis is None:
        ts, axis = [t.reshape(-1) for t in ts], 0
    res = _ember("cat", "concatenate")(ts, axis)
    return res if dtype is None else res.to(_dtype(dtype))


@_np("stack")
def _stack(arrays, axis=0, out=None, *, dtype=None, casting=None):
    _reject("stack", out=out, casting=casting)
    res = _ember("stack", "stack")([to_ember(x) for x in arrays], axis)
    return res if dtype is None else res.to(_dtype(dtype))


@_np("where")
def _where(condition, x=None, y=None):
    if x is None and y is None:
        return _nonzero(condition)
    return _ember("where", "where")(to_ember(condition), to_ember(x), to_ember(y))


@_np("nonzero")
def _nonzero(a):
    return _ember("nonzero", "nonzero")(to_ember(a), as_tuple=True)


@_np("dot")
def _dot(a, b, out=None):
    _reject("dot", out=out)
    a, b = to_ember(a), to_ember(b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim == 1 and b.ndim == 1:
        return _ember("dot", "dot")(a, b)
    if b.ndim > 2:
        raise TypeError("numpy.dot() with a >2-d second operand is not supported with ember "
                        "Tensors; use numpy.matmul or ember.tensordot")
    return _ember("matmul", "dot")(a, b)


@_np("outer")
def _outer(a, b, out=None):
    _reject("outer", out=out)
    return _ember("outer", "outer")(to_ember(a).reshape(-1), to_ember(b).reshape(-1))


@_np("clip")
def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kw):
    _reject("clip", out=out, **kw)
    lo = a_min if a_min is not np._NoValue and a_min is not None else min
    hi = a_max if a_max is not np._NoValue and a_max is not None else max
    return _ember("clamp", "clip")(to_ember(a), to_ember(lo), to_ember(hi))


@_np("round", "around")
def _round(a, decimals=0, out=None):
    _reject("round", out=out)
    return _ember("round", "round")(to_ember(a), decimals=decimals)


@_np("flip")
def _flip(m, axis=None):
    m = to_ember(m)
    dims = tuple(range(m.ndim)) if axis is None else \
        (tuple(axis) if isinstance(axis, (tuple, list)) else (axis,))
    return _ember("flip", "flip")(m, dims)


@_np("sort")
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _reject("sort", order=order)
    a = to_ember(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return _ember("sort", "sort")(a, axis, stable=bool(stable or kind == "stable")).values


@_np("argsort")
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _reject("argsort", order=order)
    a = to_ember(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return _ember("argsort", "argsort")(a, axis, stable=bool(stable or kind == "stable"))


def _like(npname):
    def handler(a, *args, dtype=None, order=None, subok=None, shape=None, device=None):
        _reject(npname, shape=shape)
        return _ember(npname, npname)(to_ember(a), *args, dtype=_dtype(dtype))
    return handler


for _n in ("zeros_like", "ones_like", "empty_like", "full_like"):
    _FUNCS[_n] = _like(_n)


@_np("copy")
def _copy(a, order=None, subok=None):
    return _ember("clone", "copy")(to_ember(a))


@_np("shape")
def _shape(a):
    return tuple(to_ember(a).shape)


@_np("ndim")
def _ndim(a):
    return to_ember(a).ndim


@_np("size")
def _size(a, axis=None):
    a = to_ember(a)
    return a.numel() if axis is None else a.shape[axis]


@_np("broadcast_to")
def _broadcast_to(array, shape, subok=False):
    return _ember("broadcast_to", "broadcast_to")(to_ember(array), tuple(shape))


def _close(npname):
    def handler(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
        a, b = to_ember(a), to_ember(b)
        if not isinstance(b, Tensor):
            b = _ember("full_like", npname)(a, b)
        return _ember(npname, npname)(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return handler


_FUNCS["allclose"] = _close("allclose")
_FUNCS["isclose"] = _close("isclose")


@_np("array_equal")
def _array_equal(a1, a2, equal_nan=False):
    a1, a2 = to_ember(a1), to_ember(a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return False
    eq = a1 == a2
    if equal_nan:
        eq = eq | (a1.isnan() & a2.isnan())
    return bool(_ember("all", "array_equal")(eq))


@_np("einsum")
def _einsum(subscripts, *operands, out=None, **kw):
    _reject("einsum", out=out)
    return _ember("einsum", "einsum")(subscripts, *[to_ember(x) for x in operands])


_FUNCS["tril"] = lambda m, k=0: _ember("tril", "tril")(to_ember(m), k)
_FUNCS["triu"] = lambda m, k=0: _ember("triu", "triu")(to_ember(m), k)


@_np("trace")
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _reject("trace", out=out, dtype=dtype)
    return _ember("diagonal", "trace")(to_ember(a), offset, axis1, axis2).sum(-1)


@_np("diagonal")
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _ember("diagonal", "diagonal")(to_ember(a), offset, axis1, axis2)


@_np("count_nonzero")
def _count_nonzero(a, axis=None, *, keepdims=False):
    _reject("count_nonzero", keepdims=keepdims or None)
    return _ember("count_nonzero", "count_nonzero")(to_ember(a), _axis(axis))


@_np("tile")
def _tile(A, reps):
    return _ember("tile", "tile")(to_ember(A), (reps,) if isinstance(reps, int) else tuple(reps))


@_np("repeat")
def _repeat(a, repeats, axis=None):
    return _ember("repeat_interleave", "repeat")(to_ember(a), to_ember(repeats), axis)


@_np("diff")
def _diff(a, n=1, axis=-1, prepend=None, append=None):
    _reject("diff", prepend=prepend, append=append)
    return _ember("diff", "diff")(to_ember(a), n, axis)


@_np("linalg.norm")
def _norm(x, ord=None, axis=None, keepdims=False):
    import ember
    return ember.linalg.norm(to_ember(x), ord, _axis(axis), bool(keepdims))


METHODS.update(__array__=__array__, __array_ufunc__=__array_ufunc__,
               __array_function__=__array_function__)
