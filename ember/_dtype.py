"""dtypes and PyTorch's type-promotion rules.

Note: ember dtypes are singletons that carry their NumPy storage dtype. bfloat16
is stored with ml_dtypes; half-precision math is done in float32 and rounded once
(see `compute_dtype`), as PyTorch's CPU kernels do.
"""
import builtins

import numpy as np
import ml_dtypes


class dtype:
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex",
                 "is_signed", "_rank", "_kind")

    def __init__(self, name, np_dtype, kind, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._kind = kind          # 0 bool, 1 int, 2 float, 3 complex
        self._rank = rank
        self.is_floating_point = kind == 2
        self.is_complex = kind == 3
        self.is_signed = name not in ("bool", "uint8", "quint8", "quint4x2", "quint2x4")

    def __repr__(self):
        return "torch." + self.name if _repr_as_torch else "ember." + self.name

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float16: complex64, bfloat16: complex64, float32: complex64,
                float64: complex128}.get(self, self)

    def __reduce__(self):
        return (_by_name, (self.name,))


# Printed as torch.* so that doctests and error messages read like PyTorch's.
_repr_as_torch = True

bool = dtype("bool", np.bool_, 0, 0)
uint8 = dtype("uint8", np.uint8, 1, 1)
int8 = dtype("int8", np.int8, 1, 2)
int16 = dtype("int16", np.int16, 1, 3)
int32 = dtype("int32", np.int32, 1, 4)
int64 = dtype("int64", np.int64, 1, 5)
float16 = dtype("float16", np.float16, 2, 6)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, 2, 7)
float32 = dtype("float32", np.float32, 2, 8)
float64 = dtype("float64", np.float64, 2, 9)
complex64 = dtype("complex64", np.complex64, 3, 10)
complex128 = dtype("complex128", np.complex128, 3, 11)

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32,
       float64, complex64, complex128)
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16,
           "int": int32, "long": int64, "cfloat": complex64, "cdouble": complex128,
           "complex32": None}

_FROM_NP = {d.np: d for d in ALL}

# Quantized dtypes: the integer storage of a quantized tensor (ember/ao/quantization/
# _qtensor.py); quint4x2/quint2x4 pack 2 or 4 values per byte. They take part in no
# type promotion and are not in ALL, so a NumPy int8 array stays int8.
qint8 = dtype("qint8", np.int8, 1, 2)
quint8 = dtype("quint8", np.uint8, 1, 1)
qint32 = dtype("qint32", np.int32, 1, 4)
quint4x2 = dtype("quint4x2", np.uint8, 1, 1)
quint2x4 = dtype("quint2x4", np.uint8, 1, 1)
QUANTIZED = (qint8, quint8, qint32, quint4x2, quint2x4)


class qscheme:
    """torch.qscheme: how a quantized tensor maps integers to reals."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return ("torch." if _repr_as_torch else "ember.") + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")


def _by_name(name):
    return globals()[name]


def from_numpy_dtype(npd):
    try:
        return _FROM_NP[npd]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type {npd}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool.") from None


def _promote_slow(a, b):
    if a is b:
        return a
    if a._kind == 3 or b._kind == 3:
        # complex with a float: keep the wider precision
        real = _promote_slow(a.to_real() if a._kind == 3 else a,
                              b.to_real() if b._kind == 3 else b)
        if real._kind < 2:
            real = float32
        return real.to_complex() if real is not float64 else complex128
    if a._kind != b._kind:
        return a if a._kind > b._kind else b
    if a._kind == 1:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a._rank > b._rank else b
    if a._kind == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    return a


_PROMOTE = {(a, b): _promote_slow(a, b) for a in ALL for b in ALL}


def promote_types(type1, type2):
    """torch.promote_types: the smallest dtype both can be cast to."""
    for pos, t in ((1, type1), (2, type2)):
        if not isinstance(t, dtype):
            raise TypeError(f"promote_types(): argument 'type{pos}' (position {pos}) must be "
                            f"torch.dtype, not {type(t).__name__}")
    return _PROMOTE[(type1, type2)]


def can_cast(from_, to):
    """torch.can_cast: whether casting does not lower the kind (complex > float > int > bool)."""
    return from_._kind <= to._kind


_default_dtype = float32


def get_default_dtype():
    return _default_dtype


def set_default_dtype(d):
    global _default_dtype
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_dtype = d


def default_complex():
    return complex128 if _default_dtype is float64 else complex64


def scalar_dtype(x):
    """The dtype PyTorch gives a Python number when it becomes a tensor."""
    t = type(x)
    if t is builtins.bool or t is np.bool_:
        return bool
    if t is int or isinstance(x, (int, np.integer)):
        return int64
    if t is float or isinstance(x, (float, np.floating)):
        return _default_dtype
    if isinstance(x, (complex, np.complexfloating)):
        return default_complex()
    raise TypeError(f"expected a number, got {type(x).__name__}")


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower-priority group only raises the kind."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._kind == 3:
        return higher
    if lower._kind == 3:
        return higher.to_complex() if higher._kind == 2 else lower
    if higher._kind == 2:
        return higher
    if higher is bool or lower._kind == 2:
        return _PROMOTE[(higher, lower)]
    return higher


def result_dtype(args):
    """torch.result_type over tensors (by dim > 0, 0-d) and Python scalars."""
    dim = zero = wrapped = None
    for a in args:
        d = getattr(a, "_dtype", None)
        if d is not None:
            if a._data.ndim:
                dim = d if dim is None else _PROMOTE[(dim, d)]
            else:
                zero = d if zero is None else _PROMOTE[(zero, d)]
        elif a is not None:
            d = scalar_dtype(a)
            wrapped = d if wrapped is None else _PROMOTE[(wrapped, d)]
    return _combine(dim, _combine(zero, wrapped))


def compute_dtype(d):
    """The dtype a kernel computes in: half precision is widened to float32."""
    return float32 if d is float16 or d is bfloat16 else d


class finfo:
    def __init__(self, type=None):
        type = type or _default_dtype
        if not (type.is_floating_point or type.is_complex):
            raise TypeError(f"torch.finfo() requires a floating point input type, got {type}")
        real = type.to_real()
        info = ml_dtypes.finfo(real.np) if real is bfloat16 else np.finfo(real.np)
        self.bits = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = real.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    def __init__(self, type):
        if type.is_floating_point or type.is_complex:
            raise TypeError(f"torch.iinfo() requires an integer input type, got {type}")
        info = np.iinfo(np.int8 if type is bool else type.np)
        self.bits = 8 if type is bool else info.bits
        self.max = 1 if type is bool else int(info.max)
        self.min = 0 if type is bool else int(info.min)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
