"""NumPy ufuncs on Tensors: NumPy picks the loop (dtypes), ember computes it.

Note: `ufunc.resolve_dtypes` is NumPy's own loop selection on dtypes alone, with NEP 50
weak Python scalars, so `np.sin(int8)` -> float16, `int / int` -> float64 and
`int8 + 1000` -> OverflowError come out exactly as in NumPy. Operands are cast to the
loop's input dtypes and the ember op runs in that dtype; the few places where ember's
(PyTorch's) kernel differs from NumPy's for the same dtype are patched in ember ops
(integer division by zero gives 0, sign(nan) is nan, modf/frexp layouts).
"""
import functools

import numpy as np

import ember
from .. import _dtype as D
from .._tensor import Tensor
from ._util import (Unsupported, check_broadcast, check_out, defaulted, dtype_key, is_weak,
                    operands, strong_dtypes, to_ember_dtype)

_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}


def _int_safe(fn, zero_result=0):
    """An integer division-like op where NumPy returns 0 for a zero divisor (ember raises)."""
    def op(a, b):
        if _dtype_of(a, b)._kind > 1:
            return fn(a, b)
        zero = b == 0
        return ember.where(zero, zero_result, fn(a, ember.where(zero, 1, b)))
        return fn(a, b)
    return op


def _dtype_of(*xs):
    for x in xs:
        if isinstance(x, Tensor):
            return x.dtype
    return D.int64


def _heaviside(x, h):
    return ember.where(ember.isnan(x), x, ember.heaviside(x, h))


def _abs(x):
    return ember.clone(x) if x.dtype is D.bool else ember.abs(x)


def _sign(x):
    if x.dtype.is_complex:
        return ember.sgn(x)         # NumPy 2: z / |z| (0 at 0)
    s = ember.sign(x)
    return ember.where(ember.isnan(x), x, s) if x.dtype.is_floating_point else s


def _identity_if_int(fn):
    def op(x):
        if x.dtype.is_complex:
            return ember.complex(fn(ember.real(x)), fn(ember.imag(x)))
        return fn(x) if x.dtype.is_floating_point else ember.clone(x)
    return op


def _lex(strict, greater):
    """NumPy's complex order (real part first, then imaginary; the CLT/CLE macros)."""
    def cmp(a, b):
        x, y = (a, b) if not greater else (b, a)
        xr, xi, yr, yi = ember.real(x), ember.imag(x), ember.real(y), ember.imag(y)
        first = (xr < yr) & (xi == xi) & (yi == yi)
        second = (xr == yr) & ((xi < yi) if strict else (xi <= yi))
        return first | second
    return cmp


def _ordered(real_fn, strict, greater):
    lex = _lex(strict, greater)

    def op(a, b):
        return lex(a, b) if a.dtype.is_complex else real_fn(a, b)
    return op


def _extreme(real_fn, greater, nan_first):
    """maximum/minimum (NaN wins) and fmax/fmin (NaN loses) on complex by NumPy's order."""
    ge = _lex(False, greater)

    def op(a, b):
        if not a.dtype.is_complex:
            return real_fn(a, b)
        an, bn = ember.isnan(a), ember.isnan(b)
        pick_a = (an | (ge(a, b) & ~bn)) if nan_first else (bn | (ge(a, b) & ~an))
        return ember.where(pick_a, a, b)
    return op


def _modf(x):
    whole = ember.trunc(x)
    frac = ember.where(ember.isinf(x), ember.copysign(ember.zeros_like(x), x), x - whole)
    return ember.copysign(frac, x), whole


def _frexp(x):
    """x = m * 2**e with 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf, nan), in ember ops."""
    finite = ember.isfinite(x) & (x != 0)
    ax = ember.where(finite, ember.abs(x), ember.ones_like(x))
    comp = x.dtype if x.dtype.itemsize >= 4 else D.float32
    e = ember.floor(ember.log2(ax.to(comp))) + 1
    m = ax.to(comp) * ember.exp2(-e)
    # log2 can round across a power of two: bring m back into [0.5, 1).
    hi, lo = m >= 1, m < 0.5
    m = ember.where(hi, m * 0.5, ember.where(lo, m * 2, m))
    e = e + hi.to(comp) - lo.to(comp)
    m = ember.copysign(m, x.to(comp)).to(x.dtype)
    return ember.where(finite, m, x), ember.where(finite, e, 0).to(D.int32)


def _cbrt(x):
    r = ember.pow(ember.abs(x), 1.0 / 3.0)
    return ember.copysign(r, x)


def _divmod(a, b):
    return _int_safe(ember.floor_divide)(a, b), _int_safe(ember.remainder)(a, b)


def _shift(fn):
    def op(a, b):
        # NumPy: shifting by >= the bit width gives 0 (or -1 for a negative >> shift).
        bits = _dtype_of(a, b).itemsize * 8
        big = b >= bits
        r = fn(a, ember.where(big, 0, b))
        fill = 0 if fn is ember.bitwise_left_shift else ember.where(a < 0, -1, 0)
        return ember.where(big, fill, r)
    return op


def _reciprocal(x):
    if x.dtype._kind > 1:
        return ember.reciprocal(x)
    return _int_safe(lambda a, b: ember.div(a, b, rounding_mode="trunc"))(
        ember.ones_like(x), x)


# NumPy ufunc name -> ember function on operands already in the loop's dtypes.
UFUNC_IMPLS = {
    "add": ember.add, "subtract": ember.sub, "multiply": ember.mul,
    "true_divide": ember.true_divide, "divide": ember.true_divide,
    "floor_divide": _int_safe(ember.floor_divide), "remainder": _int_safe(ember.remainder),
    "mod": _int_safe(ember.remainder), "fmod": _int_safe(ember.fmod),
    "power": ember.pow, "float_power": ember.float_power,
    "negative": ember.neg, "positive": ember.positive, "absolute": _abs,
    "fabs": ember.abs, "sign": _sign, "reciprocal": _reciprocal, "square": ember.square,
    "sqrt": ember.sqrt, "cbrt": _cbrt, "exp": ember.exp, "exp2": ember.exp2,
    "expm1": ember.expm1, "log": ember.log, "log2": ember.log2, "log10": ember.log10,
    "log1p": ember.log1p, "sin": ember.sin, "cos": ember.cos, "tan": ember.tan,
    "arcsin": ember.asin, "arccos": ember.acos, "arctan": ember.atan,
    "arctan2": ember.atan2, "sinh": ember.sinh, "cosh": ember.cosh, "tanh": ember.tanh,
    "arcsinh": ember.asinh, "arccosh": ember.acosh, "arctanh": ember.atanh,
    "deg2rad": ember.deg2rad, "radians": ember.deg2rad, "rad2deg": ember.rad2deg,
    "degrees": ember.rad2deg, "floor": _identity_if_int(ember.floor),
    "ceil": _identity_if_int(ember.ceil), "trunc": _identity_if_int(ember.trunc),
    "rint": _identity_if_int(ember.round),
    "maximum": _extreme(ember.maximum, True, True),
    "minimum": _extreme(ember.minimum, False, True),
    "fmax": _extreme(ember.fmax, True, False), "fmin": _extreme(ember.fmin, False, False),
    "equal": ember.eq, "not_equal": ember.ne, "less": _ordered(ember.lt, True, False),
    "less_equal": _ordered(ember.le, False, False),
    "greater": _ordered(ember.gt, True, True),
    "greater_equal": _ordered(ember.ge, False, True), "logical_and": ember.logical_and,
    "logical_or": ember.logical_or, "logical_xor": ember.logical_xor,
    "logical_not": ember.logical_not, "bitwise_and": ember.bitwise_and,
    "bitwise_or": ember.bitwise_or, "bitwise_xor": ember.bitwise_xor,
    "invert": ember.bitwise_not, "left_shift": _shift(ember.bitwise_left_shift),
    "right_shift": _shift(ember.bitwise_right_shift), "isnan": ember.isnan,
    "isinf": ember.isinf, "isfinite": ember.isfinite, "signbit": ember.signbit,
    "copysign": ember.copysign, "hypot": ember.hypot, "logaddexp": ember.logaddexp,
    "logaddexp2": ember.logaddexp2, "heaviside": _heaviside,
    "conjugate": ember.conj_physical, "nextafter": ember.nextafter, "gcd": ember.gcd,
    "lcm": ember.lcm, "ldexp": ember.ldexp, "frexp": _frexp, "modf": _modf,
    "divmod": _divmod,
}


def _fit_weak_int(name, x, loop):
    """NEP 50: a Python int must fit the integer loop dtype (OverflowError otherwise);
    comparisons instead compare exactly, so widen the loop for them."""
    if loop.kind not in "iu" or not is_weak(x) or not isinstance(x, int):
        return loop
    info = np.iinfo(loop)
    if info.min <= x <= info.max:
        return loop
    if name in _COMPARISONS:
        return np.dtype(np.int64) if -2**63 <= x < 2**63 else np.dtype(np.float64)
    raise OverflowError(f"Python integer {x} out of bounds for {loop}")


@functools.lru_cache(maxsize=4096)
def _resolve(uf, keys, dtype, casting):
    """NumPy's loop for these operand dtypes (cached: the answer depends on dtypes only)."""
    kw = {"casting": casting}
    if dtype is not None:
        kw["signature"] = (None,) * uf.nin + (dtype,) * uf.nout
    return uf.resolve_dtypes(keys + (None,) * uf.nout, **kw)


@functools.lru_cache(maxsize=None)
def make_ufunc(uf):
    """The ember implementation of NumPy ufunc `uf` (called like the ufunc); one per ufunc."""
    name = uf.__name__
    impl = UFUNC_IMPLS[name]
    nin, nout = uf.nin, uf.nout

    def call(*args, out=None, where=True, casting="same_kind", order="K", dtype=None,
             subok=True, signature=None):
        if len(args) != nin:
            raise TypeError(f"{name}() takes from {nin} to {nin + nout} positional "
                            f"arguments but {len(args)} were given")
        check_out(name, out)
        if where is not True:
            raise Unsupported(f"numpy.{name}(where=...) is not supported when tracing")
        if signature is not None:
            raise Unsupported(f"numpy.{name}(signature=...) is not supported when tracing")
        ops = operands(args, name)
        keys = tuple(dtype_key(x) for x in ops)
        if all(isinstance(k, type) for k in keys):      # only Python scalars: as arrays
            keys = tuple(np.asarray(x).dtype for x in ops)
        loop = _resolve(uf, keys, None if dtype is None else np.dtype(dtype), casting)
        ins, outs = list(loop[:nin]), loop[nin:]
        check_broadcast(ops)            # after the dtype check, in NumPy's order
        for i, x in enumerate(ops):
            ins[i] = _fit_weak_int(name, x, ins[i])
        if (name == "power" and ins[1].kind in "iu" and is_weak(ops[1])
                and isinstance(ops[1], int) and ops[1] < 0):
            raise ValueError("Integers to negative integer powers are not allowed.")
        if name in _COMPARISONS and len(set(ins)) > 1:
            common = np.result_type(*ins)
            ins = [common] * nin
        strong = strong_dtypes(ops)
        cast_ops = []
        for x, d in zip(ops, ins):
            ed = defaulted(to_ember_dtype(d, name), strong)
            if isinstance(x, Tensor):
                x = x if x.dtype is ed else (x != 0) if ed is D.bool else x.to(ed)
            elif ed is D.bool:
                x = ember.full((), bool(x), dtype=ed)       # NumPy casts to bool by truth
            else:
                # A scalar becomes a 0-d tensor of the loop dtype: ember's binary ops
                # then compute exactly in that dtype (and not all take Python scalars).
                x = ember.full((), x.item() if isinstance(x, np.generic) else x, dtype=ed)
            cast_ops.append(x)
        res = impl(*cast_ops)
        if nout == 1:
            return _as_out(res, outs[0], name, strong)
        return tuple(_as_out(r, d, name, strong) for r, d in zip(res, outs))

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = f"numpy.{name} on Tensors (NumPy's loop dtypes, ember ops)."
    return call


def _as_out(res, npd, name, strong):
    d = defaulted(to_ember_dtype(npd, name), strong)
    if not isinstance(res, Tensor):
        return ember.full((), res, dtype=d)
    return res if res.dtype is d else res.to(d)


def ufunc_table():
    """{numpy ufunc object: implementation} for every ufunc in UFUNC_IMPLS NumPy has."""
    table = {}
    for name in UFUNC_IMPLS:
        uf = getattr(np, name, None)
        if isinstance(uf, np.ufunc) and uf not in table:
            table[uf] = make_ufunc(uf)
    return table


__all__ = ["UFUNC_IMPLS", "make_ufunc", "ufunc_table", "Unsupported"]
