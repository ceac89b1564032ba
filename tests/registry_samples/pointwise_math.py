"""Samples for the pointwise math ops (ember/ops/pointwise_math.py) and ember.special."""
import ember

from ._util import C128, t, X, _unary, _binary

_SPECIAL_BESSEL = ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                   "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                   "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                   "spherical_bessel_j0", "airy_ai")

# outputs without a gradient in PyTorch: classifications, integer-only ops and the
# torch.special Bessel family (marked non-differentiable in derivatives.yaml)
NON_DIFFERENTIABLE = {"isinf", "isfinite", "signbit", "gcd", "lcm", "bitwise_left_shift",
                      "bitwise_right_shift"} | {"special_" + n for n in _SPECIAL_BESSEL}

NO_GRADCHECK = {
    "heaviside": "PyTorch records the op but its derivative raises (not implemented)",
    "special_zeta": "PyTorch records the op but its derivative raises (not implemented)",
    "acosh_": "PyTorch has no derivative for the in-place acosh_ (backward raises)",
    "asinh_": "PyTorch has no derivative for the in-place asinh_ (backward raises)",
    "atanh_": "PyTorch has no derivative for the in-place atanh_ (backward raises)",
    "igamma": "PyTorch has no derivative w.r.t. the first argument (the other one is "
              "gradchecked in tests/test_ops_pointwise_math.py)",
    "igammac": "PyTorch has no derivative w.r.t. the first argument (the other one is "
               "gradchecked in tests/test_ops_pointwise_math.py)",
}


def _unit(fn):
    return lambda: (fn, [t(2, 3, kind="pos") * 0.4])


def _ints(fn):
    return lambda: (fn, [t(2, 3, dtype=ember.int64, kind="int") + 1,
                         t(3, dtype=ember.int64, kind="int", seed=1)])


def _igamma(fn):
    return lambda: (fn, [t(3, kind="pos", seed=1), t(2, 3, kind="pos")])


S = ember.special
SAMPLES = {
    "acos": _unit(ember.acos), "asin": _unit(ember.asin), "atan": _unary(ember.atan),
    "acosh": lambda: (ember.acosh, [X(kind="pos") + 1]), "asinh": _unary(ember.asinh),
    "atanh": _unit(ember.atanh), "cosh": _unary(ember.cosh), "sinh": _unary(ember.sinh),
    "tan": _unit(ember.tan), "exp2": _unary(ember.exp2), "expm1": _unary(ember.expm1),
    "log10": _unary(ember.log10, "pos"), "log2": _unary(ember.log2, "pos"),
    "log1p": _unary(ember.log1p, "pos"), "rsqrt": _unary(ember.rsqrt, "pos"),
    "sinc": _unary(ember.sinc, dtype=C128), "erf": _unary(ember.erf),
    "erfc": _unary(ember.erfc), "erfinv": _unit(ember.erfinv),
    "lgamma": _unary(ember.lgamma, "pos"), "digamma": _unary(ember.digamma, "pos"),
    "i0": _unary(ember.i0), "ceil": _unary(ember.ceil), "trunc": _unary(ember.fix),
    "frac": _unary(ember.frac), "round": _unary(lambda x: ember.round(x, decimals=1)),
    "nan_to_num": _unary(lambda x: ember.nan_to_num(x, posinf=1.0)),
    "logit": _unit(lambda x: ember.logit(x, 0.1)),
    "polygamma": _unary(lambda x: ember.polygamma(2, x), "pos"),
    "isinf": _unary(ember.isinf), "isfinite": _unary(ember.isfinite),
    "signbit": _unary(ember.signbit),
    "acosh_": lambda: (lambda x: (x * 1).acosh_(), [X(kind="pos") + 1]),
    "asinh_": lambda: (lambda x: (x * 1).asinh_(), [X()]),
    "atanh_": _unit(lambda x: (x * 1).atanh_()),
    # binary
    "fmod": _binary(ember.fmod, "pos"), "atan2": _binary(ember.atan2),
    "hypot": _binary(ember.hypot), "fmax": _binary(ember.fmax), "fmin": _binary(ember.fmin),
    "copysign": _binary(ember.copysign, "pos"), "logaddexp": _binary(ember.logaddexp),
    "logaddexp2": _binary(ember.logaddexp2), "xlogy": _binary(ember.xlogy, "pos"),
    "nextafter": _binary(ember.nextafter),
    "heaviside": _binary(ember.heaviside),
    "gcd": _ints(ember.gcd), "lcm": _ints(ember.lcm),
    "bitwise_left_shift": _ints(lambda a, b: a << b),
    "bitwise_right_shift": _ints(lambda a, b: a >> b),
    "igamma": _igamma(ember.igamma), "igammac": _igamma(S.gammaincc),
    # ternary
    "lerp": lambda: (ember.lerp, [X(), t(3, seed=1), t(2, 1, seed=2)]),
    "addcmul": lambda: (lambda a, b, c: ember.addcmul(a, b, c, value=0.5),
                        [X(), t(3, seed=1), t(2, 1, seed=2)]),
    "addcdiv": lambda: (lambda a, b, c: ember.addcdiv(a, b, c, value=2),
                        [X(), t(3, seed=1), t(2, 1, kind="pos", seed=2)]),
    # torch.special only
    "special_erfcx": _unary(S.erfcx), "special_i0e": _unary(S.i0e), "special_i1": _unary(S.i1),
    "special_i1e": _unary(S.i1e), "special_ndtr": _unary(S.ndtr),
    "special_ndtri": _unit(S.ndtri), "special_log_ndtr": _unary(S.log_ndtr),
    "special_entr": _unary(S.entr, "pos"), "special_xlog1py": _binary(S.xlog1py, "pos"),
    "special_zeta": lambda: (S.zeta, [X(kind="pos") + 1, t(3, kind="pos", seed=1)]),
}
SAMPLES.update({"special_" + n: _unary(getattr(S, n), "pos") for n in _SPECIAL_BESSEL})
