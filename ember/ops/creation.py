"""Tensor creation: tensor/as_tensor/from_numpy, full/zeros/ones/empty, ranges, eye.

Note: factories with no tensor inputs are registry ops too (`full`, `empty`,
`arange`, `linspace`, `logspace`, `eye`), so recording modes see them; converting
Python data (`tensor`) is not an op, it is a constant. Python numbers become
dtypes by PyTorch's rules: a sequence's dtype is `promote_types` over its items
(bool, int -> int64, float -> default dtype, complex -> default complex, NumPy
scalars/arrays and tensors -> their own dtype), and a value that does not fit an
integer dtype raises instead of wrapping (negative values may wrap into unsigned
types, as in PyTorch).
"""
import math
import operator
import warnings

import numpy as np

from .. import _dtype as D
from .._device import CUSTOM, check_supported
from .._dispatch import STATE, dispatch
from .._symbolic import SymInt
from .._tensor import Tensor, wrap, Size
from ._elementwise import _KIND_NAMES
from ._registry import register

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace",
           "logspace", "eye", "scalar_tensor"]

# C++ type names PyTorch prints in scalar-conversion errors
_C_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
            "int32": "int", "int64": "int64_t", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _size(size, opname="size"):
    """A shape tuple from ints, one sequence of ints, or a torch.Size (each fits int64,
    as PyTorch's argument parser demands)."""
    if len(size) == 1 and isinstance(size[0], (list, tuple, Size)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, bool) or not hasattr(s, "__index__"):
            raise TypeError(f"{opname}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__}")
        if type(s) is not int and not isinstance(s, SymInt):   # SymInt: a symbolic size
            try:
                s = operator.index(s)
            except TypeError:
                raise TypeError(f"{opname}(): argument 'size' must be tuple of ints, but "
                                f"found element of type {type(s).__name__}") from None
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{[int(x) for x in size]}")
        if s >= 1 << 63:
            raise TypeError(f"{opname}(): argument 'size' failed to unpack the object at pos "
                            f"{len(out) + 1} with error \"Overflow when unpacking long\"")
        out.append(s)
    return tuple(out)


_PY_DTYPES = {float: D.float64, int: D.int64, bool: D.bool, complex: D.complex128}


def _check_dtype(dtype, opname):
    """dtype= as PyTorch's parser takes it: an ember dtype, or a Python number type."""
    if dtype in _PY_DTYPES and isinstance(dtype, type):
        return _PY_DTYPES[dtype]
    if dtype is not None and not isinstance(dtype, D.dtype):
        raise TypeError(f"{opname}(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    return dtype


def _check_layout(layout, opname):
    from .. import strided
    if layout is not None and layout is not strided:
        raise TypeError(f"{opname}(): argument 'layout' must be torch.layout, not "
                        f"{type(layout).__name__}")


def _finish(t, requires_grad, device, opname="tensor"):
    if device is not None:
        d = check_supported(device)
        if d.type in CUSTOM and t._device != d:       # made on the cpu, moved to the device
            from .._privateuse1 import transfer
            t = transfer(t, d)
    if requires_grad is not None and not isinstance(requires_grad, (bool, np.bool_)):
        raise TypeError(f"{opname}(): argument 'requires_grad' must be bool, not "
                        f"{type(requires_grad).__name__}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _out_dtype(dtype, out, default, opname):
    """The dtype a factory produces: dtype=, else out='s, else the default."""
    dtype = _check_dtype(dtype, opname)
    if out is None:
        return dtype or default
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {_KIND_NAMES[dtype.name]} does not match dtype of out "
                           f"parameter ({_KIND_NAMES[out.dtype.name]})")
    return out.dtype


def _result(t, out, opname, requires_grad, device):
    if out is not None:
        from ._elementwise import write_out
        return write_out(out, t, opname)
    return _finish(t, requires_grad, device, opname)


def _scalar(v, dtype, opname):
    """v (a Python/NumPy number) checked to fit dtype, as PyTorch's Scalar conversion."""
    if isinstance(v, Tensor):
        if v._data.ndim:
            raise TypeError(f"{opname}(): argument 'fill_value' (position 2) must be Number, not "
                            f"Tensor (a {v._data.ndim}-d tensor of shape {list(v._data.shape)})")
        v = v.item()
    if not isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(f"{opname}(): argument 'fill_value' (position 2) must be Number, "
                        f"not {type(v).__name__}")
    bad = RuntimeError(f"value cannot be converted to type {_C_NAMES[dtype.name]} without "
                       "overflow")
    if isinstance(v, (complex, np.complexfloating)):
        if dtype._kind < 3:
            if v.imag != 0:
                raise bad
            v = v.real
        else:
            return v
    if dtype is D.bool:
        return bool(v)
    if dtype._kind == 1:
        info = np.iinfo(dtype.np)
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):
            raise bad
        lo = -info.max if info.min == 0 and not isinstance(v, (float, np.floating)) \
            else info.min
        if not lo <= v <= info.max:
            raise bad
        return int(v) % (1 << info.bits) if v < 0 and info.min == 0 else int(v)
    if math.isfinite(v) and abs(v) > D.finfo(dtype).max:
        raise bad
    return v


# ------------------------------------------------------------ full / zeros / ones / empty

FULL = register("full", lambda size, fill_value, dtype: np.full(size, fill_value, dtype.np),
                tags=("prim", "factory"), meta=lambda size, fill_value, dtype: (size, dtype),
                schema="full(SymInt[] size, Scalar fill_value, *, ScalarType dtype) -> Tensor")
EMPTY = register("empty", lambda size, dtype: np.empty(size, dtype.np), tags=("prim", "factory"),
                 meta=lambda size, dtype: (size, dtype),
                 schema="empty.memory_format(SymInt[] size, *, ScalarType dtype) -> Tensor")


def _factory(op, args, device):
    """Run a factory op; on the 'meta' device only its meta function runs (no data)."""
    if device is not None and device != "cpu" and check_supported(device).type == "meta":
        from ._registry import run_meta
        return run_meta(op, args)
    return dispatch(op, args)


def _fill_dtype(fill_value):
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    if not isinstance(fill_value, (bool, int, float, complex, np.number, np.bool_)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    return D.scalar_dtype(fill_value)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False, names=None):
    if not isinstance(size, (list, tuple, Size)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    size = _size((size,), "full")
    _check_layout(layout, "full")
    dtype = _out_dtype(dtype, out, None, "full") or _fill_dtype(fill_value)
    t = _factory(FULL, (size, _scalar(fill_value, dtype, "full"), dtype), device)
    return _result(t, out, "full", requires_grad, device)


def _filled(value, opname):
    def fn(*args, size=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False, memory_format=None, names=None):
        if size is not None:
            if args:
                raise TypeError(f"{opname}() got multiple values for argument 'size'")
            args = (size,)
        if not args:
            raise TypeError(f'{opname}() missing 1 required positional arguments: "size"')
        shape = _size(args, opname)
        _check_layout(layout, opname)
        dt = _out_dtype(dtype, out, D.get_default_dtype(), opname)
        t = _factory(EMPTY, (shape, dt), device) if value is None else \
            _factory(FULL, (shape, value, dt), device)
        return _result(t, out, opname, requires_grad, device)
    fn.__name__ = fn.__qualname__ = opname
    return fn


zeros = _filled(0, "zeros")
ones = _filled(1, "ones")
empty = _filled(None, "empty")


def _like(fn):
    def like(input, *args, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, pin_memory=False):
        if not isinstance(input, Tensor):
            raise TypeError(f"{like.__name__}(): argument 'input' (position 1) must be Tensor, "
                            f"not {type(input).__name__}")
        if device is None and (input.is_meta or input._device.type in CUSTOM):
            device = input.device
        return fn(tuple(input.shape), *args, dtype=dtype or input.dtype,
                  requires_grad=requires_grad, device=device)
    like.__name__ = like.__qualname__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
full_like = _like(full)


# ----------------------------------------------------------------------- ranges

def _number(v, opname):
    """A Python number from a number, NumPy scalar or one-element tensor."""
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, (bool, int, float, complex)):
        raise TypeError(f"{opname}(): argument must be Number, not {type(v).__name__}")
    return v


def _arange_kernel(start, step, n, dtype):
    if dtype._kind == 1:
        return (np.int64(start) + np.arange(n, dtype=np.int64) * np.int64(step)).astype(dtype.np)
    return (start + np.arange(n, dtype=np.float64) * step).astype(dtype.np)


ARANGE = register("arange", _arange_kernel, tags=("prim", "factory"),
                  meta=lambda start, step, n, dtype: ((n,), dtype),
                  schema="arange.start_step_n(Scalar start, Scalar step, int n, "
                         "ScalarType dtype) -> Tensor")


def _fmt(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def _arange_length(start, end, step, dtype):
    """PyTorch's length rule: ceil((end - start) / step) in double; for int64, the
    truncating (end - start + step - sign(step)) / step on the truncated ints."""
    if dtype is D.int64:
        xstart, xend, xstep = int(start), int(end), int(step)
        if xstep == 0:
            raise ValueError("step must be nonzero")
        sgn = (xstep > 0) - (xstep < 0)
        num = xend - xstart + xstep - sgn          # C++ integer division truncates
        return abs(num) // abs(xstep) * (1 if (num >= 0) == (xstep > 0) else -1), xstart, xstep
    n = math.ceil((end - start) / step)
    if dtype._kind == 1:
        return n, int(start), int(step)
    return n, start, step


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    if end is None:
        start, end = 0, start
    start, end, step = (_number(v, "arange") for v in (start, end, step))
    if any(isinstance(v, complex) for v in (start, end, step)):
        raise RuntimeError("value cannot be converted to type double without overflow")
    inferred = D.get_default_dtype() if any(isinstance(v, float) for v in (start, end, step)) \
        else D.int64
    dtype = _out_dtype(dtype, out, inferred, "arange")
    if dtype is D.bool or dtype.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for '
                                  f"'{_KIND_NAMES[dtype.name]}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n, xstart, xstep = _arange_length(start, end, step, dtype)
    if n > np.iinfo(np.int64).max:
        raise RuntimeError("invalid size, possible overflow?")
    t = dispatch(ARANGE, (xstart, xstep, max(n, 0), dtype))
    return _result(t, out, "arange", requires_grad, device)


def _linspace_kernel(start, end, steps, dtype):
    if dtype._kind < 2:
        return np.linspace(start, end, steps).astype(dtype.np)
    cd = np.complex128 if dtype._kind == 3 else np.float64
    return np.linspace(start, end, steps, dtype=cd).astype(dtype.np)


def _logspace_kernel(start, end, steps, base, dtype):
    exps = np.linspace(start, end, steps, dtype=np.complex128 if dtype.is_complex else np.float64)
    return np.power(float(base), exps).astype(dtype.np)


def _linspace_decomp(start, end, steps, dtype):
    """start + iota * step in float64 (complex128), the last point exactly `end` (as
    NumPy), then cast."""
    from .. import _prims as P
    cd = D.complex128 if dtype.is_complex else D.float64
    i = P.arange(0, 1, steps, D.float64)
    if steps == 1:
        return P._to_copy(P.full([1], start, cd), dtype)
    r = P.add(P.mul(i, (end - start) / (steps - 1)), start)
    r = P.where(P.eq(i, steps - 1), P.full((), end, cd), r)
    return P._to_copy(r, dtype)


def _logspace_decomp(start, end, steps, base, dtype):
    """base ** linspace(start, end)."""
    from .. import _prims as P
    cd = D.complex128 if dtype.is_complex else D.float64
    e = _linspace_decomp(start, end, steps, cd)
    return P._to_copy(P.pow(P.full((), float(base), cd), e), dtype)


LINSPACE = register("linspace", _linspace_kernel, tags=("factory",), decomp=_linspace_decomp,
                    meta=lambda start, end, steps, dtype: ((steps,), dtype),
                    schema="linspace(Scalar start, Scalar end, int steps, *, "
                           "ScalarType dtype) -> Tensor")
LOGSPACE = register("logspace", _logspace_kernel, tags=("factory",), decomp=_logspace_decomp,
                    meta=lambda start, end, steps, base, dtype: ((steps,), dtype),
                    schema="logspace(Scalar start, Scalar end, int steps, float base=10., *, "
                           "ScalarType dtype) -> Tensor")


def _space_args(opname, start, end, steps, dtype, out):
    """Checks shared by linspace/logspace; returns (start, end, steps, dtype)."""
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.dim() != 0:
            raise RuntimeError(f"{opname} only supports 0-dimensional start and end tensors, "
                               f"but got {name} with {v.dim()} dimension(s).")
    start, end = _number(start, opname), _number(end, opname)
    if isinstance(steps, bool) or not hasattr(steps, "__index__"):
        raise TypeError(f"{opname}(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    steps = operator.index(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    is_complex = any(isinstance(v, complex) for v in (start, end))
    inferred = D.default_complex() if is_complex else D.get_default_dtype()
    dtype = _out_dtype(dtype, out, inferred, opname)
    if is_complex and not dtype.is_complex:
        raise RuntimeError(f"torch.{opname}(): inferred dtype {_C_NAMES[inferred.name]} can't "
                           f"be safely cast to passed dtype {_KIND_NAMES[dtype.name]}")
    if dtype is D.bool:
        raise NotImplementedError(f'"{opname}_cpu" not implemented for \'Bool\'')
    if dtype._kind == 1:
        for v in (start, end):
            _scalar(v, dtype, opname)
    return start, end, steps, dtype


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    start, end, steps, dtype = _space_args("linspace", start, end, steps, dtype, out)
    t = dispatch(LINSPACE, (start, end, steps, dtype))
    return _result(t, out, "linspace", requires_grad, device)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    start, end, steps, dtype = _space_args("logspace", start, end, steps, dtype, out)
    t = dispatch(LOGSPACE, (start, end, steps, _number(base, "logspace"), dtype))
    return _result(t, out, "logspace", requires_grad, device)


def _eye_decomp(n, m, dtype):
    """iota(n)[:, None] == iota(m)[None, :], cast to dtype."""
    from .. import _prims as P
    hit = P.eq(P.unsqueeze(P.arange(0, 1, n, D.int64), 1),
               P.unsqueeze(P.arange(0, 1, m, D.int64), 0))
    return P._to_copy(hit, dtype)


EYE = register("eye", lambda n, m, dtype: np.eye(n, m, dtype=dtype.np), tags=("factory",),
               meta=lambda n, m, dtype: ((n, m), dtype), decomp=_eye_decomp,
               schema="eye.m(SymInt n, SymInt m, *, ScalarType dtype) -> Tensor")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        pin_memory=False):
    for name, pos, v in (("n", 1, n), ("m", 2, m)):
        if v is not None and (isinstance(v, bool) or not hasattr(v, "__index__")):
            raise TypeError(f"eye(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dtype = _out_dtype(dtype, out, D.get_default_dtype(), "eye")
    t = dispatch(EYE, (n, m, dtype))
    return _result(t, out, "eye", requires_grad, device)


# ----------------------------------------------------------------- from Python data

_PY_SCALARS = {bool: 0, int: 1, float: 2, complex: 3}


def _infer(data):
    """PyTorch's infer_scalar_type: promote_types over a sequence's items."""
    t = type(data)
    if t in _PY_SCALARS:
        return _py_dtype(_PY_SCALARS[t])
    if isinstance(data, Tensor):
        return data.dtype
    if isinstance(data, (np.ndarray, np.generic)):
        return D.from_numpy_dtype(data.dtype)
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{t.__name__}'")
    if isinstance(data, (list, tuple, range)):
        if len(data) == 0:
            return D.get_default_dtype()
        kinds = set(map(type, data))
        if kinds <= _PY_SCALARS.keys():          # fast path: a flat list of numbers
            return _py_dtype(max(_PY_SCALARS[k] for k in kinds))
        if isinstance(data[0], (str, bytes)):   # PyTorch takes the first item's length as a dim
            raise ValueError(f"too many dimensions '{type(data[0]).__name__}'")
        out = None
        for x in data:
            d = _infer(x)
            out = d if out is None else D.promote_types(out, d)
            if out is D.complex128:
                break
        return out
    for py, kind in _PY_SCALARS.items():                # subclasses of Python numbers
        if isinstance(data, py):
            return _py_dtype(kind)
    raise RuntimeError(f"Could not infer dtype of {t.__name__}")


def _py_dtype(kind):
    if kind == 0:
        return D.bool
    if kind == 1:
        return D.int64
    if kind == 2:
        return D.get_default_dtype()
    return D.default_complex()


_WIDE = {0: np.bool_, 1: np.int64, 2: np.float64, 3: np.complex128}


def _leaf_values(data):
    """data with tensors replaced by their (single) values, as PyTorch reads them."""
    if isinstance(data, (list, tuple, range)):
        return [_leaf_values(x) for x in data]
    if isinstance(data, Tensor):
        if data.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars "
                             f"(got a tensor of shape {list(data.shape)} inside the data)")
        return data.item()
    return data


def _has_tensor(data):
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_tensor(x) for x in data)
    return False


def _sequence_array(data, dtype, inferred):
    """A NumPy array of `dtype` from nested Python data, with PyTorch's range checks."""
    if _has_tensor(data):
        data = _leaf_values(data)
    wide = _WIDE[max(dtype._kind, inferred._kind)]
    try:
        arr = np.array(data, dtype=wide)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    except (ValueError, TypeError):
        _raise_shape_error(data)
        raise
    if arr.dtype == object:
        _raise_shape_error(data)
    return _cast_checked(arr, dtype)


def _cast_checked(arr, dtype):
    """arr -> dtype; integers that do not fit raise, as PyTorch's conversion does."""
    if arr.dtype.kind == "c" and dtype._kind < 3:
        if arr.size and (arr.imag != 0).any():
            raise TypeError("must be real number, not complex")
        arr = arr.real
    if dtype._kind == 1 and arr.size:
        info = np.iinfo(dtype.np)
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr) | (arr < info.min) | (arr > info.max)
        else:
            bad = (arr > info.max) | (arr < (-info.max if info.min == 0 else info.min))
        if bad.any():
            raise RuntimeError(f"value cannot be converted to type {dtype.name} without "
                               "overflow")
    if dtype is D.bool:
        return arr != 0
    return arr.astype(dtype.np)


def _raise_shape_error(data):
    """PyTorch's message for ragged nested sequences."""
    shape = []
    x = data
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    _check_ragged(data, shape, 0)
    raise ValueError("tensor(): could not convert the data to a regular array")


def _check_ragged(x, shape, dim):
    if dim == len(shape):
        if isinstance(x, (list, tuple)):
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
        return
    if not isinstance(x, (list, tuple)):
        raise TypeError("not a sequence")
    if len(x) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                         f"(got {len(x)})")
    for y in x:
        _check_ragged(y, shape, dim + 1)


def _to_array(data, dtype):
    """(fresh array, dtype) for tensor(data, dtype=dtype)."""
    if isinstance(data, Tensor):
        d = dtype or data.dtype
        src = data._data
        if src.dtype.kind == "c" and d._kind < 3:
            src = src.real
        return np.array(src, dtype=d.np, order="C"), d
    if isinstance(data, np.ndarray):
        src = D.from_numpy_dtype(data.dtype)
        d = dtype or src
        return np.array(data, dtype=d.np, order="C"), d
    inferred = _infer(data)
    d = dtype or inferred
    if isinstance(data, np.generic):
        return np.array(data, dtype=d.np), d
    return _sequence_array(data, d, inferred), d


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False,
           names=None):
    """A new tensor that owns a copy of `data` (PyTorch 1.7: a tensor keeps its device)."""
    dtype = _check_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    arr, d = _to_array(data, dtype)
    if STATE.modes and not isinstance(data, Tensor):
        from .effects import lift_fresh_copy    # the value is part of the recorded call
        t = lift_fresh_copy(arr)
    else:
        t = wrap(arr, d)
    if isinstance(data, Tensor) and device is None:
        t._device = data._device
    return _finish(t, requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with a tensor or ndarray when dtype allows; copies otherwise."""
    dtype = _check_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        if dtype is None or dtype is data.dtype:
            return data
        return data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        if isinstance(obj, Tensor):
            t = obj.detach().clone() if dtype is None else obj.detach().to(dtype, copy=True)
        else:
            t = tensor(obj, dtype=dtype)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    return _finish(t, requires_grad, device)


def from_numpy(ndarray):
    """A tensor sharing memory with `ndarray` (ember did not allocate it: not counted)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and "
                         "tensors with negative strides are not currently supported. (You can "
                         "probably work around this by making a copy of your array  with "
                         "array.copy().) ")
    d = D.from_numpy_dtype(ndarray.dtype)
    from .._memory import _Storage
    t = object.__new__(Tensor)
    t._data, t._dtype, t._storage = ndarray, d, _Storage(0)
    t._backend, t._rg = "cpu", False     # as wrap() (fast reads by every op)
    return t


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False, layout=None,
                  pin_memory=False):
    return tensor(s, dtype=dtype or D.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def _new_device(self, device):
    """Tensor.new_*'s device: the one given, else a PrivateUse1 tensor's own."""
    return device if device is not None or self._device.type not in CUSTOM else self._device


def _make_methods():
    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False,
                   layout=None, pin_memory=False):
        return tensor(data, dtype=dtype or self.dtype, device=_new_device(self, device),
                      requires_grad=requires_grad)

    def _new(fn):
        def m(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
            return fn(*size, dtype=dtype or self.dtype, device=_new_device(self, device),
                      requires_grad=requires_grad)
        m.__name__ = "new_" + fn.__name__
        return m

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
                 layout=None, pin_memory=False):
        return full(size, fill_value, dtype=dtype or self.dtype, device=_new_device(self, device),
                    requires_grad=requires_grad)

    METHODS["new_tensor"] = new_tensor
    METHODS["new_zeros"] = _new(zeros)
    METHODS["new_ones"] = _new(ones)
    METHODS["new_empty"] = _new(empty)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                          layout=None, pin_memory=False):
        from .misc import empty_strided
        return empty_strided(size, stride, dtype=dtype or self.dtype,
                             device=_new_device(self, device), requires_grad=requires_grad)

    METHODS["new_empty_strided"] = new_empty_strided
    METHODS["new_full"] = new_full


_make_methods()
