"""The rest of PyTorch's pointwise math: trigonometry, rounding, special functions,
the float/integer binary functions, lerp/addcmul/addcdiv and the closeness tests.

Each primitive is one `pointwise(...)`-style op (kernel on arrays already in the
compute dtype, vjp in ember ops as in PyTorch's derivatives.yaml); functions that
PyTorch itself implements as compositions (float_power, ldexp, deg2rad, isclose,
mvlgamma, ...) are compositions here too and add no registry entry. The special
functions' kernels come from `scipy.special`, imported inside the kernels so that
`import ember` does not pay for SciPy.
"""
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch, STATE
from .._tensor import Tensor, wrap
from ._registry import REGISTRY
from ._elementwise import (PointwiseOp, inplace, write_out, result_and_compute, operator_methods,
                           type_name, DEFAULT, INT_TO_FLOAT, ALWAYS_BOOL)

METHODS = {}    # Tensor methods made here; ember/_tensor_methods.py installs them

ALL = None
NOT_COMPLEX = {0, 1, 2}
REAL_NUMBERS = {1, 2}       # integers and floats, not bool
FLOATS = {2}
FLOATS_COMPLEX = {2, 3}
INTEGERS = {1}
HALF = (D.float16, D.bfloat16)

__all__ = []


def _sp():
    import scipy.special
    return scipy.special


class MathOp(PointwiseOp):
    """A pointwise op with extra argument rules (`check(op, args)`), run by both the
    eager path and the meta; `opmath=False` computes half precision in itself (for
    ops such as nextafter whose answer depends on the storage format)."""

    def __init__(self, name, kernel, arity, promotion=DEFAULT, check=None, opmath=True, **kw):
        super().__init__(name, kernel, arity, promotion, **kw)
        self.extra_check = check
        self.opmath = opmath

    def _meta(self, *args):
        if self.extra_check is not None:
            self.extra_check(self, args)
        return super()._meta(*args)

    def run_kernel(self, args):
        if self.extra_check is not None:
            self.extra_check(self, args)
        if not self.opmath:
            ops = args[:self.arity]
            res, _ = result_and_compute(ops, self.promotion)
            if res in HALF and all(not isinstance(o, Tensor) or o._backend == "cpu" for o in ops):
                arrs = [o._data.astype(res.np) if isinstance(o, Tensor) else
                        np.asarray(o, res.np) for o in ops]
                return wrap(np.asarray(self.kernels["cpu"](*arrs, *args[self.arity:])), res)
        return super().run_kernel(args)


def register_math(name, kernel, arity, promotion=DEFAULT, **kw):
    op = MathOp(name, kernel, arity, promotion, **kw)
    if name in REGISTRY:
        raise RuntimeError(f"op '{name}' registered twice")
    REGISTRY[name] = op
    return op


# ------------------------------------------------------------- argument checks

def _dtype_of(x):
    return x._dtype if isinstance(x, Tensor) else D.scalar_dtype(x)


def no_half(op, args):
    """Kernels PyTorch has only for float32/float64 (and ints): half inputs are refused."""
    res, _ = result_and_compute(args[:op.arity], op.promotion if op.promotion != ALWAYS_BOOL
                                else DEFAULT)
    if res in HALF:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for \'{type_name(res)}\'')


def no_complex(message):
    """PyTorch refuses complex inputs of these ops with a RuntimeError of its own."""
    def check(op, args):
        for a in args[:op.arity]:
            if _dtype_of(a)._kind == 3:
                raise RuntimeError(message)
    return check


def expect_tensors(*names):
    """Public-wrapper check: PyTorch has no overload taking a number in these places."""
    def check(fname, args):
        for i, (a, n) in enumerate(zip(args, names)):
            if n and not isinstance(a, Tensor):
                raise TypeError(f"{fname}(): argument '{n}' (position {i + 1}) must be Tensor, "
                                f"not {type(a).__name__}")
    return check


def _zeros(g):
    return g.new_zeros(g.shape) if hasattr(g, "new_zeros") else g * 0


def _not_implemented(what):
    """PyTorch records a node whose backward raises for these inputs."""
    def fail():
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return fail


# ----------------------------------------------------------------- exposure

def expose(op, name, norm=None, method=True, inplace_method=True, module=None):
    """ember.<name>(..., out=None), Tensor.<name> and Tensor.<name>_ for `op`.

    `norm(*args, **kwargs)` turns the public signature into the op's positional args
    (defaults filled in, PyTorch's TypeErrors for bad arguments). `module` (a module's
    globals with an `__all__`) receives the function instead of ember's namespace."""
    norm = norm or (lambda *a: a)

    def fn(*args, out=None, **kw):
        res = dispatch(op, norm(*args, **kw))
        return res if out is None else write_out(out, res, name)
    fn.__name__ = fn.__qualname__ = name
    if module is None:
        _export(name, fn, method)
    else:
        module[name] = fn
        module["__all__"].append(name)
    if inplace_method:
        def ifn(self, *args, **kw):
            return inplace(op, self, norm(self, *args, **kw))
        ifn.__name__ = name + "_"
        METHODS[name + "_"] = ifn
    return fn


def _export(name, fn, method=True):
    globals()[name] = fn
    __all__.append(name)
    if method:
        METHODS[name] = fn


def alias(new, old):
    """arccos = acos ...: the same function, method and in-place method."""
    f = globals()[old]
    _export(new, f, old in METHODS)
    if old + "_" in METHODS:
        METHODS[new + "_"] = METHODS[old + "_"]


# -------------------------------------------------------------------- unary

def unary(name, kernel, vjp, promotion=INT_TO_FLOAT, allowed=ALL, save_out=False,
          inplace_method=True, **kw):
    kw.setdefault("save", () if save_out else None)
    kw.setdefault("schema", f"{name}(Tensor self) -> Tensor")
    kw.setdefault("tags", ("pointwise", "prim"))      # elementwise math: primitives
    op = register_math(name, kernel, 1, promotion, vjp=vjp, allowed=allowed, save_out=save_out,
                       **kw)
    expose(op, name, inplace_method=inplace_method)
    return op


def _x(ctx):
    return ctx.args[0]


def _c(t):
    return t.conj()


unary("acos", np.arccos, lambda ctx, g: (-g * _c((1 - _x(ctx) * _x(ctx)).rsqrt()),))
unary("asin", np.arcsin, lambda ctx, g: (g * _c((1 - _x(ctx) * _x(ctx)).rsqrt()),))
unary("atan", np.arctan, lambda ctx, g: (g / _c(_x(ctx) * _x(ctx) + 1),))
unary("acosh", np.arccosh, lambda ctx, g: (g * _c((_x(ctx) * _x(ctx) - 1).rsqrt()),))
unary("asinh", np.arcsinh, lambda ctx, g: (g * _c((_x(ctx) * _x(ctx) + 1).rsqrt()),))
unary("atanh", np.arctanh, lambda ctx, g: (g / _c(1 - _x(ctx) * _x(ctx)),))
def _no_inplace_grad(name):
    """PyTorch has no derivative for acosh_/asinh_/atanh_: a twin op (same kernel) whose
    backward raises is what the in-place method records."""
    base = REGISTRY[name]
    twin = register_math(name + "_", base.kernels["cpu"], 1, INT_TO_FLOAT, save=(),
                         tags=("pointwise", "prim"),
                         schema=f"{name}_(Tensor self) -> Tensor",
                         vjp=lambda ctx, g: _not_implemented(f"inplace version of {name}")())
    METHODS[name + "_"] = lambda self: inplace(twin, self, (self,))


for _n in ("acosh", "asinh", "atanh"):
    _no_inplace_grad(_n)
unary("cosh", np.cosh, lambda ctx, g: (g * _c(_x(ctx).sinh()),))
unary("sinh", np.sinh, lambda ctx, g: (g * _c(_x(ctx).cosh()),))
unary("tan", np.tan, lambda ctx, g: (g * _c(1 + ctx.out * ctx.out),), save_out=True)
unary("exp2", np.exp2, lambda ctx, g: (g * _c(ctx.out * math.log(2.0)),), save_out=True)
unary("expm1", np.expm1, lambda ctx, g: (g * _c(ctx.out + 1),), save_out=True)
unary("log10", np.log10, lambda ctx, g: (g / _c(_x(ctx) * math.log(10.0)),))
unary("log2", np.log2, lambda ctx, g: (g / _c(_x(ctx) * math.log(2.0)),))
unary("log1p", np.log1p, lambda ctx, g: (g / _c(_x(ctx) + 1),))
unary("rsqrt", lambda a: 1 / np.sqrt(a),
      lambda ctx, g: (-0.5 * g * _c(ctx.out * ctx.out * ctx.out),), save_out=True)


def _sinc_vjp(ctx, g):
    x = _x(ctx)
    px = x * math.pi
    d = (px * px.cos() - px.sin()) / (px * x)
    return (g * _c(d.masked_fill(x == 0, 0)),)


unary("sinc", np.sinc, _sinc_vjp)

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
unary("erf", lambda a: _sp().erf(a),
      lambda ctx, g: (g * _TWO_OVER_SQRT_PI * (-_x(ctx) * _x(ctx)).exp(),), allowed=NOT_COMPLEX)
unary("erfc", lambda a: _sp().erfc(a),
      lambda ctx, g: (-g * _TWO_OVER_SQRT_PI * (-_x(ctx) * _x(ctx)).exp(),), allowed=NOT_COMPLEX)
unary("erfinv", lambda a: _sp().erfinv(a),
      lambda ctx, g: (g * (0.5 * math.sqrt(math.pi)) * (ctx.out * ctx.out).exp(),),
      allowed=NOT_COMPLEX, save_out=True)
unary("lgamma", lambda a: np.where(a == -np.inf, np.inf, _sp().gammaln(a)),
      lambda ctx, g: (g * _x(ctx).digamma(),), allowed=NOT_COMPLEX)
unary("digamma", lambda a: _sp().psi(a), lambda ctx, g: (g * polygamma(1, _x(ctx)),),
      allowed=NOT_COMPLEX)
unary("i0", lambda a: _sp().i0(a), lambda ctx, g: (g * _i1(_x(ctx)),), allowed=NOT_COMPLEX)


def _i1(x):
    from .. import special
    return special.i1(x)


def _int_copy(f):
    """Rounding leaves integers as they are (a copy, in their own dtype)."""
    return lambda a, *r: a.copy() if a.dtype.kind in "iu" else f(a, *r)


def _zero_grad(ctx, g):
    return (_zeros(g),) + (None,) * (len(ctx.args) - 1)


unary("ceil", _int_copy(np.ceil), _zero_grad, DEFAULT, REAL_NUMBERS)
unary("trunc", _int_copy(np.trunc), _zero_grad, DEFAULT, REAL_NUMBERS)
unary("frac", lambda a: a - np.trunc(a), lambda ctx, g: (g,), DEFAULT, FLOATS, save=())


def _round_kernel(a, decimals=None):
    if a.dtype.kind in "iu":
        return a.copy()
    if not decimals:
        return np.rint(a)
    p = np.asarray(10.0 ** abs(decimals), a.dtype)
    return np.rint(a * p) / p if decimals > 0 else np.rint(a / p) * p


def _round_check(op, args):
    """round(x) keeps integers; the `decimals` overload (even decimals=0) refuses them."""
    d = args[0]._dtype
    if len(args) > 1 and args[1] is not None and d._kind == 1:
        kernel = "round_vml_cpu" if args[1] == 0 else "round_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_name(d)}'")


def _round_args(input, *, decimals=None):
    return (input, decimals)


ROUND = register_math("round", _round_kernel, 1, DEFAULT, vjp=_zero_grad, allowed=REAL_NUMBERS,
                      check=_round_check, save=(),
                      tags=("pointwise", "prim"),
                      schema="round.decimals(Tensor self, *, int? decimals=None) -> Tensor")
expose(ROUND, "round", _round_args)
# also the vjps of the rounding ops above read nothing
for _n in ("ceil", "trunc"):
    REGISTRY[_n].save = ()


def _nan_to_num_kernel(a, nan=0.0, posinf=None, neginf=None):
    if a.dtype.kind in "biu":
        return a.copy()
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


class _NanToNum(MathOp):
    """nan_to_num's default bounds are those of the input's own (maybe half) dtype."""

    def run_kernel(self, args):
        a = args[0]
        if isinstance(a, Tensor) and a._dtype._kind == 3 and a._rg and STATE.grad_enabled:
            raise RuntimeError("nan_to_num does not support automatic differentiation for "
                               "outputs with complex dtype.")
        if isinstance(a, Tensor) and a._dtype._kind >= 2:
            fi = D.finfo(a._dtype.to_real())
            args = (a, args[1], fi.max if args[2] is None else args[2],
                    fi.min if args[3] is None else args[3])
        return super().run_kernel(args)


def _nan_to_num_args(input, nan=0.0, posinf=None, neginf=None):
    return (input, 0.0 if nan is None else nan, posinf, neginf)


def _nan_to_num_decomp(a, nan=0.0, posinf=None, neginf=None):
    """where(isnan), where(== inf), where(== -inf); complex: on the real and imaginary parts."""
    from .. import _prims as P
    if a.dtype.is_complex:
        parts = _nan_to_num_decomp(P.view_as_real(a), nan, posinf, neginf)
        return P.view_as_complex(parts)
    if not a.dtype.is_floating_point:
        return P.clone(a, None)
    info = D.finfo(a.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    r = P.where(P.isnan(a), P.full((), nan, a.dtype), a)
    r = P.where(P.eq(r, math.inf), P.full((), hi, a.dtype), r)
    return P.where(P.eq(r, -math.inf), P.full((), lo, a.dtype), r)


NAN_TO_NUM = _NanToNum("nan_to_num", _nan_to_num_kernel, 1, DEFAULT,
                       vjp=lambda ctx, g: (g * _x(ctx).isfinite(), None, None, None),
                       decomp=_nan_to_num_decomp,
                       schema="nan_to_num(Tensor self, float nan=0., float? posinf=None, "
                              "float? neginf=None) -> Tensor")
REGISTRY["nan_to_num"] = NAN_TO_NUM
expose(NAN_TO_NUM, "nan_to_num", _nan_to_num_args)


def _logit_kernel(a, eps=None):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def _logit_vjp(ctx, g):
    x, eps = ctx.args
    d = g / (x * (1 - x))
    if eps is None:
        return d.masked_fill((x < 0) | (x > 1), float("nan")), None
    return d.masked_fill((x < eps) | (x > 1 - eps), 0), None


def _logit_args(input, eps=None):
    return (input, eps)


LOGIT = register_math("logit", _logit_kernel, 1, INT_TO_FLOAT, vjp=_logit_vjp,
                      allowed=NOT_COMPLEX,
                      schema="logit(Tensor self, float? eps=None) -> Tensor",
                      tags=("pointwise", "prim"))
expose(LOGIT, "logit", _logit_args)


def _polygamma_kernel(a, n):
    return _sp().polygamma(n, a) if n else _sp().psi(a)


def _polygamma_check(op, args):
    if args[1] < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


# Note: registry args are (input, n) -- tensor operands come first in pointwise ops --
# while the public function keeps PyTorch's polygamma(n, input).
POLYGAMMA = register_math("polygamma", _polygamma_kernel, 1, INT_TO_FLOAT, allowed=NOT_COMPLEX,
                          check=_polygamma_check,
                          vjp=lambda ctx, g: (g * polygamma(ctx.args[1] + 1, _x(ctx)), None),
                          schema="polygamma(Tensor self, int n) -> Tensor",
                          tags=("pointwise", "prim"))


def polygamma(n, input, *, out=None):
    res = dispatch(POLYGAMMA, (input, n))
    return res if out is None else write_out(out, res, "polygamma")


__all__.append("polygamma")
METHODS["polygamma"] = lambda self, n: polygamma(n, self)
METHODS["polygamma_"] = lambda self, n: inplace(POLYGAMMA, self, (self, n))


# boolean classifications (not differentiable)
for _n, _k in (("isinf", np.isinf), ("isfinite", np.isfinite)):
    unary(_n, _k, None, ALWAYS_BOOL, inplace_method=False)
unary("signbit", np.signbit, None, ALWAYS_BOOL, NOT_COMPLEX, inplace_method=False)


def _isxinf(name, sign):
    def fn(input, *, out=None):
        if input._dtype._kind == 3:
            raise RuntimeError(f"{name} does not support complex inputs.")
        res = input == sign * math.inf if input._dtype._kind == 2 else \
            input.new_zeros(input.shape, dtype=D.bool)
        return res if out is None else write_out(out, res, name)
    fn.__name__ = name
    _export(name, fn)


_isxinf("isposinf", 1)
_isxinf("isneginf", -1)


def isreal(input):
    if input._dtype._kind == 3:
        return input.imag == 0
    return input.new_ones(input.shape, dtype=D.bool)


_export("isreal", isreal)


# ------------------------------------------------------- composite unary functions

def positive(input):
    if input._dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


_export("positive", positive)


def _to_float(input):
    return input if input._dtype._kind >= 2 else input.to(D.get_default_dtype())


def _deg(name, factor):
    def fn(input, *, out=None):
        if input._dtype._kind == 3:
            raise RuntimeError(f"{name} is not supported for complex tensors.")
        res = _to_float(input) * factor
        return res if out is None else write_out(out, res, name)

    def ifn(self):
        if self._dtype._kind < 2:
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{type_name(self._dtype)}")
        return self.mul_(factor) if self._dtype._kind != 3 else fn(self)
    fn.__name__ = name
    _export(name, fn)
    METHODS[name + "_"] = ifn


_deg("deg2rad", math.pi / 180)
_deg("rad2deg", 180 / math.pi)


def mvlgamma(input, p, *, out=None):
    """PyTorch's composite: sum_i lgamma(x - i/2) + p(p-1)/4 log(pi)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _to_float(input)
    from .creation import arange
    steps = arange(0, -p / 2, -0.5, dtype=x.dtype)
    res = (x.unsqueeze(-1) + steps).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)
    return res if out is None else write_out(out, res, "mvlgamma")


_export("mvlgamma", mvlgamma)
METHODS["mvlgamma_"] = lambda self, p: self.copy_(mvlgamma(self, p))


# ------------------------------------------------------------------- binary

def binary(name, kernel, vjp, promotion=DEFAULT, allowed=ALL, check=None, tensor_args=("input",
           "other"), inplace_method=True, **kw):
    kw.setdefault("tags", ("pointwise", "prim"))      # elementwise math: primitives
    op = register_math(name, kernel, 2, promotion, vjp=vjp, allowed=allowed, check=check, **kw)
    guard = expect_tensors(*tensor_args)

    def norm(*args):
        guard(name, args)
        return args
    expose(op, name, norm, inplace_method=inplace_method)
    return op


def _check_int_zero(a, b):
    if isinstance(a, np.ndarray) and a.dtype.kind in "iub" and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")


def _fmod(a, b):
    _check_int_zero(a, b)
    return np.fmod(a, b)


def _args2(ctx):
    return ctx.args[0], ctx.args[1]


def _fmod_vjp(ctx, g):
    a, b = _args2(ctx)
    na, nb = ctx.needs_input_grad
    return (g if na else None, -g * a.div(b, rounding_mode="trunc") if nb else None)


binary("fmod", _fmod, _fmod_vjp, DEFAULT, REAL_NUMBERS, tensor_args=("input", None),
       schema="fmod.Tensor(Tensor self, Tensor other) -> Tensor")


def _atan2_vjp(ctx, g):
    """PyTorch's atan2_backward: the gradient at (0, 0) is 0, not NaN."""
    a, b = _args2(ctx)
    recip = (a * a + b * b).reciprocal()
    recip = recip.masked_fill(recip.isinf(), 0)
    return g * b * recip, -g * a * recip


binary("atan2", np.arctan2, _atan2_vjp, INT_TO_FLOAT, NOT_COMPLEX,
       schema="atan2(Tensor self, Tensor other) -> Tensor")


def _hypot_vjp(ctx, g):
    a, b = _args2(ctx)
    return g * a / ctx.out, g * b / ctx.out


binary("hypot", np.hypot, _hypot_vjp, DEFAULT, FLOATS, save_out=True,
       schema="hypot(Tensor self, Tensor other) -> Tensor")


def _fmax_vjp(ctx, g, ge):
    a, b = _args2(ctx)
    take_a = ge(a, b) | b.isnan()
    return g.masked_fill(~take_a, 0), g.masked_fill(take_a, 0)


def _first_on_tie(f):
    """fmax/fmin return their first operand when the two compare equal (0.0 vs -0.0), as
    PyTorch's kernels do; NumPy's choice depends on its SIMD path."""
    def k(a, b):
        return np.where(np.equal(a, b), a, f(a, b))
    return k


binary("fmax", _first_on_tie(np.fmax),
       lambda ctx, g: _fmax_vjp(ctx, g, lambda a, b: a >= b), DEFAULT,
       check=no_complex("fmax not implemented for complex tensors."), inplace_method=False,
       schema="fmax(Tensor self, Tensor other) -> Tensor")
binary("fmin", _first_on_tie(np.fmin),
       lambda ctx, g: _fmax_vjp(ctx, g, lambda a, b: a <= b), DEFAULT,
       check=no_complex("fmin not implemented for complex tensors."), inplace_method=False,
       schema="fmin(Tensor self, Tensor other) -> Tensor")


def _copysign_vjp(ctx, g):
    a = ctx.args[0]
    ratio = (ctx.out / a).masked_fill(a == 0, 0)
    return g * ratio, _zeros(g)


binary("copysign", np.copysign, _copysign_vjp, INT_TO_FLOAT, NOT_COMPLEX, save=(0,),
       save_out=True, tensor_args=("input", None),
       schema="copysign.Tensor(Tensor self, Tensor other) -> Tensor")


def _logaddexp(a, b):
    if a.dtype.kind != "c":
        return np.logaddexp(a, b)
    m = np.where(a.real >= b.real, a, b)
    m = np.where(np.isinf(m.real), 0, m)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


def _logaddexp_vjp(ctx, g, base):
    a, b = _args2(ctx)
    if base == 2:
        return g / (1 + (b - a).exp2()), g / (1 + (a - b).exp2())
    return g / _c(1 + (b - a).exp()), g / _c(1 + (a - b).exp())


binary("logaddexp", _logaddexp, lambda ctx, g: _logaddexp_vjp(ctx, g, None), DEFAULT,
       FLOATS_COMPLEX, inplace_method=False,
       schema="logaddexp(Tensor self, Tensor other) -> Tensor")
binary("logaddexp2", np.logaddexp2, lambda ctx, g: _logaddexp_vjp(ctx, g, 2), DEFAULT, FLOATS,
       inplace_method=False,
       schema="logaddexp2(Tensor self, Tensor other) -> Tensor")


def _xlogy(a, b, log=np.log):
    with np.errstate(all="ignore"):
        out = np.where(np.asarray(a) == 0, 0, a * log(b))
    return np.where(np.isnan(b), np.nan, out)


def _xlogy_vjp(ctx, g, fn, shift):
    """PyTorch: self gets fn(grad, other), zero where self == 0 and other is at or
    below the log's pole; other gets grad * self / (other + shift)."""
    a, b = _args2(ctx)
    na, nb = ctx.needs_input_grad
    ga = gb = None
    if na:
        ga = fn(g, b).masked_fill((a == 0) & (b <= -shift), 0)
    if nb:
        gb = g * a / (b + shift) if shift else g * a / b
    return ga, gb


XLOGY = binary("xlogy", _xlogy, lambda ctx, g: _xlogy_vjp(ctx, g, xlogy, 0), INT_TO_FLOAT,
               NOT_COMPLEX, tensor_args=(None, None),
               schema="xlogy.Tensor(Tensor self, Tensor other) -> Tensor")


def _nextafter(a, b):
    if a.dtype.itemsize != 2 or a.dtype == np.float16:
        return np.nextafter(a, b)
    # bfloat16: step the bit pattern (NumPy has no nextafter for it)
    a, b = np.broadcast_arrays(a, b)
    bits = a.view(np.uint16).astype(np.int32)
    up = (a < b) == (a > 0)
    step = np.where(up, bits + 1, bits - 1)
    tiny = np.where(b > 0, 1, 0x8001)
    out = np.where(a == 0, tiny, step).astype(np.uint16).view(a.dtype)
    out = np.where(a == b, b, out)
    return np.where(np.isnan(a) | np.isnan(b), np.float32("nan"), out.astype(np.float32)) \
        .astype(a.dtype)


binary("nextafter", _nextafter, lambda ctx, g: (g, _zeros(g)), DEFAULT, FLOATS, opmath=False,
       save=(),
       schema="nextafter(Tensor self, Tensor other) -> Tensor")


def _heaviside(a, b):
    return np.where(a == 0, b, (a > 0).astype(a.dtype))


def _heaviside_check(op, args):
    a, b = args[:2]
    if a._dtype._kind == 3 or b._dtype._kind == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if a._dtype is not b._dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


def _heaviside_vjp(ctx, g):
    raise RuntimeError("derivative for aten::heaviside is not implemented")


binary("heaviside", _heaviside, _heaviside_vjp, DEFAULT, check=_heaviside_check, save=(),
       tensor_args=("input", "values"),
       schema="heaviside(Tensor self, Tensor values) -> Tensor")
binary("gcd", np.gcd, None, DEFAULT, INTEGERS,
       schema="gcd(Tensor self, Tensor other) -> Tensor")
binary("lcm", np.lcm, None, DEFAULT, INTEGERS,
       schema="lcm(Tensor self, Tensor other) -> Tensor")


def _shift(a, b, left):
    a = np.asarray(a)
    b = np.asarray(b).astype(a.dtype)
    bits = a.dtype.itemsize * 8
    ok = (b >= 0) & (b < bits)
    sb = np.where(ok, b, 0)
    if left:
        ua = a.view(a.dtype.str.replace("i", "u")) if a.dtype.kind == "i" else a
        return np.where(ok, np.left_shift(ua, sb.astype(ua.dtype)).view(a.dtype), 0) \
            .astype(a.dtype)
    fill = np.right_shift(a, bits - 1) if a.dtype.kind == "i" else np.zeros_like(a)
    return np.where(ok, np.right_shift(a, sb), fill).astype(a.dtype)


def _shift_check(name):
    def check(op, args):
        res, _ = result_and_compute(args[:2], DEFAULT)
        if res._kind != 1:
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{type_name(res)}\'')
    return check


LSHIFT = binary("bitwise_left_shift", lambda a, b: _shift(a, b, True), None, DEFAULT,
                check=_shift_check("lshift"), tensor_args=(None, None),
                schema="bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor")
RSHIFT = binary("bitwise_right_shift", lambda a, b: _shift(a, b, False), None, DEFAULT,
                check=_shift_check("rshift"), tensor_args=(None, None),
                schema="bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor")
METHODS.update(operator_methods("lshift", LSHIFT))
METHODS.update(operator_methods("rshift", RSHIFT))


def _igamma_vjp(ctx, g, sign):
    a, x = _args2(ctx)
    if ctx.needs_input_grad[0]:
        _not_implemented("igamma: input")()
    d = ((a - 1) * x.log() - x - a.lgamma()).exp()
    return None, g * d if sign > 0 else -g * d


binary("igamma", lambda a, x: _sp().gammainc(a, x), lambda ctx, g: _igamma_vjp(ctx, g, 1),
       DEFAULT, FLOATS,
       schema="igamma(Tensor self, Tensor other) -> Tensor")
binary("igammac", lambda a, x: _sp().gammaincc(a, x), lambda ctx, g: _igamma_vjp(ctx, g, -1),
       DEFAULT, FLOATS,
       schema="igammac(Tensor self, Tensor other) -> Tensor")


# --------------------------------------------------------- composite binaries

def float_power(input, exponent, *, out=None):
    """pow computed in double (complex double when either side is complex)."""
    dt = D.complex128 if any(_dtype_of(x)._kind == 3 for x in (input, exponent)) else D.float64
    a = input.to(dt) if isinstance(input, Tensor) else input
    b = exponent.to(dt) if isinstance(exponent, Tensor) else exponent
    from .pointwise import pow as _pow
    if not isinstance(a, Tensor):
        a = b.new_full((), a, dtype=dt) if isinstance(b, Tensor) else a
    res = _pow(a, b)
    return res if out is None else write_out(out, res, "float_power")


def _float_power_(self, exponent):
    dt = D.complex128 if any(_dtype_of(x)._kind == 3 for x in (self, exponent)) else D.float64
    if self._dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {type_name(self._dtype)} "
                           f"but the operation's result requires dtype {type_name(dt)}")
    return self.pow_(exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


_export("float_power", float_power)
METHODS["float_power_"] = _float_power_


def ldexp(input, other, *, out=None):
    """input * 2 ** other, as PyTorch's composite."""
    from .pointwise import pow as _pow
    dt, _ = result_and_compute((input, other), INT_TO_FLOAT)
    res = input.to(dt) * _pow(2.0, other.to(dt))
    return res if out is None else write_out(out, res, "ldexp")


_export("ldexp", ldexp)
METHODS["ldexp_"] = lambda self, other: self.mul_(
    __import__("ember").pow(2.0, other.to(self._dtype if self._dtype._kind >= 2 else
                                          D.get_default_dtype())))


# ------------------------------------------------------------------ ternary

def _lerp_kernel(a, b, w):
    d = b - a
    return np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w)).astype(np.result_type(a, b))


def _lerp_check(op, args):
    a, b, w = args
    if not isinstance(b, Tensor):
        raise TypeError(f"lerp(): argument 'end' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    if b._dtype is not a._dtype:
        raise RuntimeError(f"expected dtype {a._dtype.name.replace('float32', 'float')} for "
                           f"`end` but got dtype {b._dtype.name.replace('float32', 'float')}")
    if isinstance(w, Tensor) and w._dtype is not a._dtype:
        raise RuntimeError(f"expected dtype {a._dtype.name.replace('float32', 'float')} for "
                           f"`weight` but got dtype {w._dtype.name.replace('float32', 'float')}")
    if a._dtype._kind < 2:
        raise NotImplementedError(f"\"lerp_kernel_{'tensor' if isinstance(w, Tensor) else 'scalar'}"
                                  f"\" not implemented for '{type_name(a._dtype)}'")


def _lerp_vjp(ctx, g):
    a, b, w = ctx.args
    na, nb, nw = ctx.needs_input_grad
    wc = _c(w) if isinstance(w, Tensor) else (w.conjugate() if isinstance(w, complex) else w)
    return (g * (1 - wc) if na else None, g * wc if nb else None,
            g * _c(b - a) if nw else None)


def _lerp_decomp(a, b, w):
    """a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w): PyTorch's two-sided formula."""
    from .. import _prims as P
    d = P.sub(b, a)
    lo = P.add(a, P.mul(w, d))
    hi = P.sub(b, P.mul(d, P.sub(1, w) if isinstance(w, Tensor) else 1 - w))
    if not isinstance(w, Tensor):
        return lo if abs(w) < 0.5 else hi
    return P.where(P.lt(P.abs(w), 0.5), lo, hi)


LERP = register_math("lerp", _lerp_kernel, 3, DEFAULT, vjp=_lerp_vjp, check=_lerp_check,
                     decomp=_lerp_decomp,
                     schema="lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor")
expose(LERP, "lerp")


def _addc_kernel(div):
    def k(a, t1, t2, value=1):
        if a.dtype.kind in "iub":
            value = int(value)          # PyTorch casts value to the integer dtype
        return a + value * (t1 / t2 if div else t1 * t2)
    return k


def _addcdiv_check(op, args):
    if all(isinstance(t, Tensor) and t._dtype._kind < 2 for t in args[1:3]):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
            "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))."
            "to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
            "float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")


def _addcmul_vjp(ctx, g):
    _, t1, t2, v = ctx.args
    n0, n1, n2 = ctx.needs_input_grad[:3]
    return (g if n0 else None, g * _c(t2 * v) if n1 else None, g * _c(t1 * v) if n2 else None,
            None)


def _addcdiv_vjp(ctx, g):
    _, t1, t2, v = ctx.args
    n0, n1, n2 = ctx.needs_input_grad[:3]
    return (g if n0 else None, g * _c(v / t2) if n1 else None,
            -g * _c(v * t1 / (t2 * t2)) if n2 else None, None)


def _addc_args(name):
    guard = expect_tensors("input", "tensor1", "tensor2")

    def norm(input, tensor1, tensor2, *, value=1):
        guard(name, (input, tensor1, tensor2))
        return (input, tensor1, tensor2, value)
    return norm


def _addc_decomp(divide):
    """self + value * t1 * t2 (addcmul) or self + value * t1 / t2 (addcdiv)."""
    def decomp(a, t1, t2, value=1):
        from .. import _prims as P
        r = P.div(t1, t2) if divide else P.mul(t1, t2)
        return P.add(a, r if value == 1 else P.mul(r, value))
    return decomp


ADDCMUL = register_math("addcmul", _addc_kernel(False), 3, DEFAULT, vjp=_addcmul_vjp,
                        decomp=_addc_decomp(False),
                        schema="addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, "
                               "Scalar value=1) -> Tensor")
ADDCDIV = register_math("addcdiv", _addc_kernel(True), 3, DEFAULT, vjp=_addcdiv_vjp,
                        decomp=_addc_decomp(True),
                        check=_addcdiv_check,
                        schema="addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, "
                               "Scalar value=1) -> Tensor")
expose(ADDCMUL, "addcmul", _addc_args("addcmul"))
expose(ADDCDIV, "addcdiv", _addc_args("addcdiv"))


# -------------------------------------------------------------- closeness

def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """PyTorch's composite: |a - b| <= atol + rtol * |b|, finite, or equal."""
    if input._dtype is not other._dtype:
        raise RuntimeError(f"{type_name(input._dtype)} did not match {type_name(other._dtype)}")
    if equal_nan and input._dtype._kind == 3:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = input == other
    if input._dtype is D.bool or (rtol == 0 and atol == 0):
        return close
    if equal_nan and input._dtype._kind >= 2:
        close = close | (input.isnan() & other.isnan())
    a, b = _to_float(input), _to_float(other)
    allowed = atol + (rtol * b).abs()
    err = (a - b).abs()
    return close | (err.isfinite() & (err <= allowed))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """True when both have the same size and elements (the values compared after promotion)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool((input == other).all())


for _f in (isclose, allclose, equal):
    _export(_f.__name__, _f)


# ------------------------------------------------------------------ aliases

for _new, _old in (("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"),
                   ("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh"),
                   ("arctan2", "atan2"), ("fix", "trunc")):
    alias(_new, _old)
