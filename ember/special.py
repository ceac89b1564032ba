"""ember.special: PyTorch's torch.special.

Functions that torch.* also has (erf, i0, xlogy, gammainc = igamma, ...) are the very
same functions and registry ops; the ones only torch.special has are registered here
as pointwise ops (aten's `special_*` names) with kernels from `scipy.special`, which
is imported inside the kernels only.
"""
import math

import numpy as np

from .ops import pointwise_math as _pm
from .ops.pointwise_math import (register_math, expose, expect_tensors, no_half, _sp,
                                 _not_implemented, _xlogy, _xlogy_vjp, NOT_COMPLEX)
from .ops._elementwise import INT_TO_FLOAT
from .ops import pointwise as _pw, activation as _act

__all__ = []
_G = globals()

# ------------------------------------------------------- shared with torch.*
for _name, _fn in (("erf", _pm.erf), ("erfc", _pm.erfc), ("erfinv", _pm.erfinv),
                   ("expm1", _pm.expm1), ("exp2", _pm.exp2), ("log1p", _pm.log1p),
                   ("i0", _pm.i0), ("sinc", _pm.sinc),
                   ("digamma", _pm.digamma), ("psi", _pm.digamma),
                   ("polygamma", _pm.polygamma), ("gammaln", _pm.lgamma),
                   ("multigammaln", _pm.mvlgamma), ("xlogy", _pm.xlogy), ("logit", _pm.logit),
                   ("expit", _pw.sigmoid), ("gammainc", _pm.igamma),
                   ("gammaincc", _pm.igammac)):
    _G[_name] = _fn
    __all__.append(_name)


def round(input, *, decimals=0, out=None):
    """torch.special.round always takes the `decimals` overload (integers are refused)."""
    return _pm.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    return _act.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _act.log_softmax(input, dim, dtype)


def logsumexp(input, dim, keepdim=False, *, out=None):
    from . import logsumexp as _lse
    return _lse(input, dim, keepdim, out=out)


__all__ += ["round", "softmax", "log_softmax", "logsumexp"]


# -------------------------------------------------------- special-only ops

def _x(ctx):
    return ctx.args[0]


_SQRT_2PI = math.sqrt(2 * math.pi)


def _unary(name, kernel, vjp, half=True, save_out=False, arg="self"):
    op = register_math("special_" + name, kernel, 1, INT_TO_FLOAT, vjp=vjp, allowed=NOT_COMPLEX,
                       check=None if half else no_half, save_out=save_out,
                       tags=("pointwise", "prim"), schema=f"special_{name}(Tensor {arg}) -> Tensor")
    expose(op, name, method=False, inplace_method=False, module=_G)
    return op


def _i1_vjp(ctx, g):
    x = _x(ctx)
    return (g * (_G["i0"](x) - ctx.out / x).masked_fill(x == 0, 0.5),)


def _i1e_vjp(ctx, g):
    x = _x(ctx)
    return (g * (i0e(x) - ctx.out * (x.sgn() + 1 / x)).masked_fill(x == 0, 0.5),)


_unary("erfcx", lambda a: _sp().erfcx(a),
       lambda ctx, g: (g * (2 * _x(ctx) * ctx.out - 2 / math.sqrt(math.pi)),), half=False,
       save_out=True)
_unary("i0e", lambda a: _sp().i0e(a),
       lambda ctx, g: (g * (i1e(_x(ctx)) - _x(ctx).sgn() * ctx.out),), save_out=True)
_unary("i1", lambda a: _sp().i1(a), _i1_vjp, save_out=True)
_unary("i1e", lambda a: _sp().i1e(a), _i1e_vjp, save_out=True)
_unary("ndtr", lambda a: _sp().ndtr(a),
       lambda ctx, g: (g * (-0.5 * _x(ctx) * _x(ctx)).exp() / _SQRT_2PI,))
_unary("ndtri", lambda a: _sp().ndtri(a),
       lambda ctx, g: (g * _SQRT_2PI * (0.5 * ctx.out * ctx.out).exp(),), half=False,
       save_out=True)
_unary("log_ndtr", lambda a: _sp().log_ndtr(a),
       lambda ctx, g: (g * (-0.5 * _x(ctx) * _x(ctx) - ctx.out).exp() / _SQRT_2PI,),
       half=False, save_out=True)
_unary("entr", lambda a: _sp().entr(a), lambda ctx, g: (-g * (1 + _x(ctx).log()),))
for _name, _k in (("bessel_j0", "j0"), ("bessel_j1", "j1"), ("bessel_y0", "y0"),
                  ("bessel_y1", "y1"), ("modified_bessel_i0", "i0"),
                  ("modified_bessel_i1", "i1"), ("modified_bessel_k0", "k0"),
                  ("modified_bessel_k1", "k1"), ("scaled_modified_bessel_k0", "k0e"),
                  ("scaled_modified_bessel_k1", "k1e")):
    _unary(_name, (lambda k: lambda a: getattr(_sp(), k)(a))(_k), None, half=False,
           arg="x" if _name.startswith("scaled") else "self")
_unary("spherical_bessel_j0", lambda a: _sp().spherical_jn(0, a), None, half=False, arg="x")
_unary("airy_ai", lambda a: _sp().airy(a)[0], None, half=False, arg="x")


def _binary(name, kernel, vjp, check=None):
    op = register_math("special_" + name, kernel, 2, INT_TO_FLOAT, vjp=vjp, allowed=NOT_COMPLEX,
                       check=check, tags=("pointwise", "prim"),
                       schema=f"special_{name}(Tensor self, Tensor other) -> Tensor")
    guard = expect_tensors(None, None)

    def norm(input, other):
        guard(name, (input, other))
        if not isinstance(input, _pm.Tensor) and not isinstance(other, _pm.Tensor):
            raise TypeError(f"special_{name}(): at least one of 'input' and 'other' must be a "
                            "Tensor")
        return (input, other)
    expose(op, name, norm, method=False, inplace_method=False, module=_G)
    return op


_binary("xlog1py", lambda a, b: _xlogy(a, b, np.log1p),
        lambda ctx, g: _xlogy_vjp(ctx, g, xlog1py, 1))


def _zeta_vjp(ctx, g):
    _not_implemented("zeta")()


_binary("zeta", lambda x, q: _sp().zeta(x, q), _zeta_vjp, no_half)

# the orthogonal polynomials (chebyshev_polynomial_t, hermite_polynomial_h, ...)
from ._special_polynomials import install as _install_polynomials  # noqa: E402
_install_polynomials(_G)
del _name, _k, _fn
