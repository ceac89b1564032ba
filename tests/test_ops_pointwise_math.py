"""The pointwise math functions (ember/ops/pointwise_math.py) against PyTorch.

One OpInfo row per function: ordinary, empty, 0-d, broadcast and non-contiguous inputs,
special values (NaN, +-inf, +-0, domain boundaries), integer/bool inputs where PyTorch
accepts them, and the errors PyTorch raises. In-place and out= variants follow.
"""
import numpy as np
import pytest

from oracle import check, check_error, NC
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I32, I64, U8, B, C64, C128
import ember

INF, NAN = np.inf, np.nan
SPECIAL = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 700.0])


def rng(seed=0):
    return np.random.default_rng(seed)


def U(lo, hi):
    """Inputs drawn from (lo, hi): a function of the shape."""
    return lambda *shape, seed=0: rng(seed).uniform(lo, hi, shape)


N = lambda *shape, seed=0: rng(seed).standard_normal(shape)     # noqa: E731
POS = U(0.2, 3.0)
UNIT = U(-0.9, 0.9)


def samples(gen, special=SPECIAL):
    """The standard unary samples: ordinary, empty, 0-d, non-contiguous, special values."""
    return [S(gen(3, 4)), S(gen(0, 3), grad=False), S(gen()), S(NC(gen(3, 5, seed=1))),
            S(special, grad=False)]


def binary_samples(ga, gb):
    return [S(ga(3, 4), gb(3, 4, seed=1)), S(ga(2, 3, 4), gb(4, seed=2)),
            S(ga(0, 4), gb(4, seed=3), grad=False), S(ga(), gb(3, seed=4)),
            S(NC(ga(3, 5)), gb(3, 5, seed=5))]


def binary_rows(name, ga, gb, dtypes, special_dtypes=(F32, F64, F16), **kw):
    """Samples over float32/float64, one sample over the other dtypes, and every pair
    of special values (floating dtypes only: they have no integer meaning)."""
    a, b = np.meshgrid(SPECIAL[:10], SPECIAL[:10])
    rows = [OpInfo(name, binary_samples(ga, gb), **kw),
            OpInfo(name + "-special", [S(a.ravel(), b.ravel())], dtypes=special_dtypes,
                   grad=False, fn=_call(name))]
    extra = tuple(d for d in dtypes if d not in (F32, F64))
    if extra:
        rows.append(OpInfo(name + "-dtypes", [S(ga(2, 3), gb(3, seed=1))], dtypes=extra,
                           grad=False, fn=_call(name)))
    return rows


def _call(name):
    return lambda L, *a, **k: getattr(L, name)(*a, **k)


def unary_rows(name, gen, dtypes):
    rows = [OpInfo(name, samples(gen))]
    extra = tuple(d for d in dtypes if d not in (F32, F64))
    if extra:
        rows.append(OpInfo(name + "-dtypes", [S(gen(2, 3))], dtypes=extra, grad=False,
                           fn=_call(name)))
    return rows


FLOATS = (F32, F64)
WITH_INT = (F32, F64, F16, I64, I32, U8, B)

UNARY = [
    # name, generator, dtypes, extra special values
    ("acos", UNIT, WITH_INT), ("asin", UNIT, WITH_INT), ("atan", N, WITH_INT),
    ("acosh", U(1.2, 4), WITH_INT), ("asinh", N, WITH_INT), ("atanh", UNIT, WITH_INT),
    ("cosh", N, WITH_INT), ("sinh", N, WITH_INT), ("tan", UNIT, WITH_INT),
    ("exp2", N, WITH_INT), ("expm1", N, WITH_INT), ("log10", POS, WITH_INT),
    ("log2", POS, WITH_INT), ("log1p", POS, WITH_INT), ("rsqrt", POS, WITH_INT),
    ("sinc", N, WITH_INT), ("erf", N, WITH_INT), ("erfc", N, WITH_INT),
    ("erfinv", UNIT, WITH_INT), ("lgamma", POS, WITH_INT), ("digamma", POS, WITH_INT),
    ("i0", N, WITH_INT), ("ceil", N, (F32, F64, F16, I64, I32, U8)),
    ("trunc", N, (F32, F64, F16, I64, U8)), ("fix", N, (F32, F64, I64)),
    ("frac", N, (F32, F64, F16)), ("round", N, (F32, F64, F16, I64)),
    ("logit", U(0.05, 0.95), WITH_INT), ("nan_to_num", N, WITH_INT),
    ("deg2rad", N, WITH_INT), ("rad2deg", N, WITH_INT), ("positive", N, (F32, F64, I64)),
    ("arccos", UNIT, FLOATS), ("arcsin", UNIT, FLOATS), ("arctan", N, FLOATS),
    ("arccosh", U(1.2, 4), FLOATS), ("arcsinh", N, FLOATS), ("arctanh", UNIT, FLOATS),
]
BOOL_UNARY = [("isinf", WITH_INT), ("isfinite", WITH_INT), ("isposinf", WITH_INT),
              ("isneginf", WITH_INT), ("isreal", WITH_INT), ("signbit", WITH_INT)]
COMPLEX_UNARY = ["acos", "asin", "atan", "acosh", "asinh", "atanh", "cosh", "sinh", "tan",
                 "exp2", "expm1", "log10", "log2", "log1p", "rsqrt", "sinc", "isinf",
                 "isfinite", "isreal", "nan_to_num", "positive"]


def _complex(*shape, seed=0):
    r = rng(seed)
    return (r.uniform(0.2, 0.9, shape) + 1j * r.uniform(-0.5, 0.5, shape))


OPS = [r for n, g, d in UNARY for r in unary_rows(n, g, d)]
OPS += [OpInfo(n, samples(N), dtypes=d, grad=False) for n, d in BOOL_UNARY]
OPS += [OpInfo(n + "-complex", [S(_complex(3, 4)), S(NC(_complex(3, 5))),
                                S(np.array([complex(INF, 0), complex(NAN, 1), 0j, 1 + 2j]),
                                  grad=False)],
               dtypes=(C64, C128), gradcheck_dtypes=(C128,), fn=(lambda n: lambda L, x:
                                                                  getattr(L, n)(x))(n),
               grad=n not in ("isinf", "isfinite", "isreal", "nan_to_num"))
        for n in COMPLEX_UNARY]
OPS += [
    OpInfo("round-decimals", [S(N(3, 4) * 50, decimals=1), S(N(3, 4) * 50, decimals=-1),
                              S(np.array([0.125, 2.5, -2.5, 1.05, NAN, INF]), decimals=2, grad=False)],
           fn=lambda L, x, decimals: L.round(x, decimals=decimals)),
    OpInfo("logit-eps", [S(U(-0.2, 1.2)(3, 4), eps=0.1), S(SPECIAL, 0.2, grad=False)],
           fn=lambda L, x, eps: L.logit(x, eps)),
    OpInfo("nan_to_num-args", [S(SPECIAL, nan=1.5, posinf=2.0, neginf=-3.0, grad=False),
                               S(N(3, 4), nan=0.5)],
           dtypes=(F32, F64, F16), fn=lambda L, x, **kw: L.nan_to_num(x, **kw)),
    OpInfo("polygamma", [S(0, POS(3, 4)), S(1, POS(3, 4)), S(3, POS(2, 3)),
                         S(2, np.array([0.0, -0.5, 1.5, NAN]), grad=False)],
           dtypes=(F32, F64, I64), fn=lambda L, n, x: L.polygamma(n, x),
           errors=[E(-1, np.ones(3))]),
    OpInfo("Tensor.polygamma", [S(POS(3, 4), 2)], fn=lambda L, x, n: x.polygamma(n)),
    OpInfo("mvlgamma", [S(U(2.0, 4.0)(3, 4), 1), S(U(2.0, 4.0)(3, 4), 3),
                        S(np.array(2.5), 2)], dtypes=(F32, F64),
           fn=lambda L, x, p: L.mvlgamma(x, p), errors=[E(np.array([2.5]), 0)]),
]

# --------------------------------------------------------------------- binary
NB = lambda *s, seed=0: rng(seed).standard_normal(s) * 3                 # noqa: E731
NZ = lambda *s, seed=0: np.where(np.abs(x := NB(*s, seed=seed)) < 0.3, 1.0, x)  # noqa: E731
INTS = lambda *s, seed=0: rng(seed).integers(-20, 20, s).astype(np.float64)  # noqa: E731
SHIFTS = lambda *s, seed=0: rng(seed).integers(0, 9, s).astype(np.float64)  # noqa: E731

OPS += [r for args in (
    ("fmod", NB, NZ, (F16, I64)), ("atan2", NB, NB, WITH_INT), ("hypot", NB, NZ, (F16,)),
    ("fmax", NB, NB, WITH_INT), ("fmin", NB, NB, WITH_INT), ("copysign", NZ, NB, WITH_INT),
    ("logaddexp", NB, NB, (F16,)), ("logaddexp2", NB, NB, (F16,)), ("xlogy", NB, POS, WITH_INT))
    for r in binary_rows(*args)]
OPS += [
    OpInfo("arctan2", binary_samples(NB, NB)[:2]),
    OpInfo("nextafter", binary_samples(NB, NB) + [S(np.array([0.0, -0.0, 1.0, NAN, INF, 1.0]),
                                                     np.array([-1.0, 1.0, 1.0, 1.0, 0.0, INF]))],
           dtypes=(F32, F64, F16), grad=False),
    OpInfo("ldexp", [S(NB(3, 4), SHIFTS(3, 4).astype(np.int64)),
                     S(NB(2, 3), SHIFTS(3).astype(np.int64)), S(NB(0, 3), NB(3))],
           dtypes=(F32, F64, F16)),
    OpInfo("float_power", binary_samples(POS, NB) + [S(POS(3), 2),
                                                                    S(2.5, NB(3))],
           dtypes=(F32, F64, I64)),
    OpInfo("igamma", [S((0.5, 1.5, 2.0, 4.0), POS(3, 4, seed=1)), S((2.5,), POS(3)),
                      S((0.5, 1.0, INF, NAN, 2.0), np.array([0.0, INF, 1.0, 1.0, -1.0]),
                        grad=False)],
           fn=lambda L, a, x: L.igamma(L.tensor(a, dtype=x.dtype), x), dtypes=(F32, F64, F16)),
    OpInfo("igammac", [S((0.5, 1.5, 2.0, 4.0), POS(3, 4, seed=1))],
           fn=lambda L, a, x: L.igammac(L.tensor(a, dtype=x.dtype), x)),
    OpInfo("fmod-scalar", [S(NB(3, 4), 1.5), S(NB(3, 4), -2)], fn=lambda L, a, b: L.fmod(a, b),
           dtypes=(F32, F64, I64)),
    OpInfo("xlogy-scalar", [S(NB(3, 4), 1.5), S(2.0, POS(3, 4)), S(0.0, POS(3))],
           fn=lambda L, a, b: L.xlogy(a, b), dtypes=(F32, F64, I64)),
    OpInfo("copysign-scalar", [S(NB(3, 4), -0.0), S(NB(3, 4), 2)],
           fn=lambda L, a, b: L.copysign(a, b)),
    OpInfo("heaviside", [S(INTS(3, 4) / 5, NB(4)), S(np.array([0.0, -0.0, NAN, INF, -1.0]),
                                                      np.array([0.5]))],
           dtypes=(F32, F64, I64, B), grad=False),
    OpInfo("gcd", [S(INTS(3, 4), INTS(3, 4, seed=1)), S(INTS(2, 3), INTS(3)),
                   S(np.array([0, 0, -4, 7]), np.array([0, 5, 6, -14]))],
           dtypes=(I64, I32, U8), grad=False),
    OpInfo("lcm", [S(INTS(3, 4), INTS(3, 4, seed=1)), S(np.array([0, 0, -4, 7]),
                                                        np.array([0, 5, 6, -14]))],
           dtypes=(I64, I32, U8), grad=False),
    OpInfo("bitwise_left_shift", [S(INTS(3, 4), SHIFTS(3, 4)), S(INTS(2, 3), SHIFTS(3)),
                                  S(np.array([1, -1, 3, 5]), np.array([0, 63, 64, -1]))],
           dtypes=(I64, I32, U8), grad=False),
    OpInfo("bitwise_right_shift", [S(INTS(3, 4), SHIFTS(3, 4)),
                                   S(np.array([-8, 8, -1, 5]), np.array([1, 70, 63, -2]))],
           dtypes=(I64, I32), grad=False),
    OpInfo("shift-operators", [S(INTS(3, 4), SHIFTS(3, 4))], dtypes=(I64, U8), grad=False,
           fn=lambda L, a, b: (a << b, a >> b, a << 2, a >> 1, 1 << b)),
]

# -------------------------------------------------------------------- ternary
OPS += [
    OpInfo("lerp", [S(NB(3, 4), NB(3, 4, seed=1), 0.3), S(NB(3, 4), NB(4, seed=1), 0.8),
                    S(NB(3, 4), NB(3, 4, seed=1), N(3, 4, seed=2)),
                    S(NB(2, 1, 4), NB(3, 1, seed=1), N(4, seed=2)), S(NB(0, 4), NB(4), 0.5),
                    S(NC(NB(3, 5)), NC(NB(3, 5, seed=2)), 1.5)],
           dtypes=(F32, F64, F16)),
    OpInfo("lerp-complex", [S(_complex(3, 4), _complex(3, 4, seed=1), 0.25)],
           dtypes=(C64, C128), gradcheck_dtypes=(C128,), fn=lambda L, a, b, w: L.lerp(a, b, w)),
    OpInfo("addcmul", [S(NB(3, 4), NB(3, 4, seed=1), NB(4, seed=2), value=0.5),
                       S(NB(4), NB(3, 1, seed=1), NB(3, 4, seed=2)), S(NB(0, 4), NB(4), NB(4)),
                       S(NC(NB(3, 5)), NB(3, 5), NB(3, 5), value=-2)],
           dtypes=(F32, F64, F16, I64)),
    OpInfo("addcdiv", [S(NB(3, 4), NB(3, 4, seed=1), NZ(4, seed=2), value=0.5),
                       S(NB(4), NB(3, 1, seed=1), NZ(3, 4, seed=2)),
                       S(NC(NB(3, 5)), NB(3, 5), NZ(3, 5), value=2)],
           dtypes=(F32, F64, F16)),
]

# ------------------------------------------------------------------ closeness
_A = np.array([1.0, NAN, INF, -INF, 1e-9, 100.0, 0.0])
_B = np.array([1.0 + 1e-6, NAN, INF, INF, 0.0, 100.01, -0.0])
OPS += [
    OpInfo("isclose", [S(_A, _B), S(_A, _B, equal_nan=True), S(_A, _B, rtol=1e-3, atol=0.0),
                       S(N(3, 4), N(4)), S(_A, _B, rtol=0.0, atol=0.0)],
           dtypes=(F32, F64, I64, B), grad=False,
           errors=[E(np.ones(3, np.float32), np.ones(3)), E(np.ones(3), np.ones(3), rtol=-1.0)]),
    OpInfo("allclose", [S(_A, _B), S(_A, _B, equal_nan=True), S(_A[:1], _A[:1])],
           fn=lambda L, a, b, **kw: L.tensor(L.allclose(a, b, **kw)), grad=False),
    OpInfo("equal", [S(N(3, 4), N(3, 4)), S(N(3, 4), N(3, 4, seed=1)), S(N(3), N(4)),
                     S(np.zeros(0), np.zeros(0)), S(_A, _A)],
           dtypes=(F32, I64, B), fn=lambda L, a, b: L.tensor(L.equal(a, b)), grad=False),
    OpInfo("Tensor.equal-mixed", [S(np.ones(3, np.float32), np.ones(3, np.int64))],
           dtypes=(None,), fn=lambda L, a, b: L.tensor(a.equal(b)), grad=False),
]

# --------------------------------------------------------------------- errors
ERR = [
    ("gcd", [E(np.ones(3, np.float32), np.ones(3, np.float32)),
             E(np.ones(3, bool), np.ones(3, bool))]),
    ("lcm", [E(np.ones(3), np.ones(3, np.int64))]),
    ("frac", [E(np.ones(3, np.int64))]), ("ceil", [E(np.ones(3, bool)), E(np.ones(3, C64))]),
    ("round", [E(np.ones(3, bool))]),
    ("erf", [E(np.ones(3, C64))]), ("lgamma", [E(np.ones(3, C64))]),
    ("hypot", [E(np.ones(3, np.int64), np.ones(3, np.int64)), E(np.ones(3), 2.0)]),
    ("fmax", [E(np.ones(3, C64), np.ones(3, C64)), E(np.ones(3), np.ones(4))]),
    ("fmin", [E(np.ones(3, C64), np.ones(3, C64))]),
    ("logaddexp", [E(np.ones(3, np.int64), np.ones(3, np.int64))]),
    ("nextafter", [E(np.ones(3, np.int64), np.ones(3, np.int64))]),
    ("heaviside", [E(np.ones(3, np.float32), np.ones(3)), E(np.ones(3), 0.5),
                   E(np.ones(3, C64), np.ones(3, C64))]),
    ("fmod", [E(2.5, np.ones(3)), E(np.ones(3, np.int64), np.zeros(3, np.int64)),
              E(np.ones(3, bool), np.ones(3, bool))]),
    ("atan2", [E(np.ones(3), 2.0), E(np.ones((2, 3)), np.ones(2))]),
    ("bitwise_left_shift", [E(np.ones(3), np.ones(3)), E(np.ones(3, bool), np.ones(3, bool))]),
    ("isposinf", [E(np.ones(3, C64))]), ("isneginf", [E(np.ones(3, C64))]),
    ("deg2rad", [E(np.ones(3, C64))]), ("positive", [E(np.ones(3, bool))]),
    ("signbit", [E(np.ones(3, C64))]),
    ("lerp", [E(np.ones(3, np.float32), np.ones(3), 0.5), E(np.ones(3, np.int64),
                                                             np.ones(3, np.int64), 0.5),
              E(np.ones(3), np.ones(3), np.ones(3, np.float32)), E(np.ones(3), 2.0, 0.5)]),
    ("addcdiv", [E(np.ones(3), np.ones(3, np.int64), np.ones(3, np.int64))]),
    ("addcmul", [E(np.ones(3), np.ones(2), np.ones(3))]),
]
OPS += [OpInfo(n + "-errors", [], fn=(lambda n: lambda L, *a, **k: getattr(L, n)(*a, **k))(n),
               errors=e) for n, e in ERR]
OPS += [OpInfo("round-int-decimals", [], fn=lambda L, x, d: L.round(x, decimals=d),
               errors=[E(np.ones(3, np.int64), 1), E(np.ones(3, np.int64), 0)]),
        OpInfo("float_power_", [], fn=lambda L, x: x.float_power_(2),
               errors=[E(np.ones(3, np.float32))]),
        OpInfo("shift-float", [], fn=lambda L, x: x << 1, errors=[E(np.ones(3))])]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


# ------------------------------------------------------------ in-place, out=
INPLACE = [("acos", UNIT), ("cosh", N), ("tan", UNIT), ("exp2", N), ("expm1", N),
           ("log1p", POS), ("rsqrt", POS), ("sinc", N), ("erf", N), ("erfinv", UNIT),
           ("lgamma", POS), ("digamma", POS), ("i0", N), ("ceil", N), ("trunc", N),
           ("fix", N), ("frac", N), ("round", N), ("logit", U(0.1, 0.9)),
           ("nan_to_num", N), ("deg2rad", N), ("rad2deg", N), ("arccos", UNIT)]


@pytest.mark.parametrize("name,gen", INPLACE)
def test_unary_inplace_and_out(name, gen):
    def f(L, a):
        b = a * 1
        getattr(b, name + "_")()
        return b
    check(f, gen(3, 4))
    check(lambda L, a: getattr(L, name)(a, out=L.empty(0)), gen(3, 4).astype(np.float32),
          grad=False)


BINARY_INPLACE = [("fmod", NB, NZ), ("atan2", NB, NB), ("hypot", NB, NZ), ("copysign", NZ, NB),
                  ("xlogy", NB, POS), ("nextafter", NB, NB), ("ldexp", NB, SHIFTS),
                  ("igamma", POS, POS)]


@pytest.mark.parametrize("name,ga,gb", BINARY_INPLACE)
def test_binary_inplace_and_out(name, ga, gb):
    def f(L, a, b):
        c = a.detach() * 1 if name == "igamma" else a * 1
        getattr(c, name + "_")(b)
        return c
    check(f, ga(3, 4), gb(4, seed=1), grad=name not in ("igamma", "nextafter"))
    check(lambda L, a, b: getattr(L, name)(a, b, out=L.empty(0)), ga(3, 4), gb(4, seed=1),
          grad=False)


def test_ternary_inplace_and_out():
    check(lambda L, a, b, c: (a * 1).lerp_(b, c), NB(3, 4), NB(4), N(3, 4))
    check(lambda L, a, b, c: (a * 1).addcmul_(b, c, value=2), NB(3, 4), NB(4), NB(3, 4))
    check(lambda L, a, b, c: (a * 1).addcdiv_(b, c, value=-1), NB(3, 4), NB(4), NZ(3, 4))
    check(lambda L, a, b, c: L.addcdiv(a, b, c, out=L.empty(0)), NB(3, 4), NB(4), NZ(3, 4),
          grad=False)
    check(lambda L, a, b: (a * 1).float_power_(b), POS(3, 4), NB(4))
    check(lambda L, a: L.isposinf(a, out=L.empty(0, dtype=L.bool)), SPECIAL, grad=False)
    check(lambda L, a: (a * 1).polygamma_(1), POS(3, 4))
    check(lambda L, a: (a * 1).mvlgamma_(2), U(2, 3)(3, 4))
    check(lambda L, a, b: (a * 1).__ilshift__(b), INTS(3, 4).astype(np.int64),
          SHIFTS(4).astype(np.int64), grad=False)


def test_inplace_refuses_a_wider_result():
    check_error(lambda L, a: a.acos_(), np.ones(3, np.int64))
    check_error(lambda L, a, b: a.atan2_(b), np.ones(3, np.float32), np.ones(3, np.complex64))


def test_bfloat16():
    """bfloat16 cannot travel as a NumPy array: cast inside the function."""
    x = N(3, 4)
    for name in ("erf", "lgamma", "acos", "exp2", "sinc", "round", "frac", "logit"):
        check(lambda L, a: getattr(L, name)((a / 4).to(L.bfloat16)), x, grad=False,
              atol=1e-2, rtol=1e-2)
    check(lambda L, a, b: L.nextafter(a.to(L.bfloat16), b.to(L.bfloat16)), x, N(4, seed=1),
          grad=False, atol=0, rtol=0)
    check(lambda L, a: L.nan_to_num(a.to(L.bfloat16)), SPECIAL, grad=False)


def test_special_values_of_the_gradients():
    """Derivative corner cases PyTorch defines (0 at poles, masks, NaNs)."""
    check(lambda L, a: L.sinc(a), np.array([0.0, 0.5, 1.0]))
    check(lambda L, a: L.logit(a), np.array([-0.5, 0.0, 0.3, 1.0, 1.5]))
    check(lambda L, a: L.logit(a, 0.2), np.array([-0.5, 0.0, 0.1, 0.3, 0.8, 1.0, 1.5]))
    check(lambda L, a, b: L.fmax(a, b), np.array([1.0, 2, NAN, 3, NAN]),
          np.array([2.0, 1, 1, 3, NAN]))
    check(lambda L, a, b: L.fmin(a, b), np.array([1.0, 2, NAN, 3, NAN]),
          np.array([2.0, 1, 1, 3, NAN]))
    check(lambda L, a, b: L.copysign(a, b), np.array([1.0, 0, -2, 0]), np.array([-1.0, -1, 2, 1]))
    check(lambda L, a, b: L.xlogy(a, b), np.array([0.0, 0, 1, 2]), np.array([0.0, 2, 0, NAN]))
    check(lambda L, a: L.nan_to_num(a), np.array([NAN, INF, 1.0]))
    check(lambda L, a, b: L.hypot(a, b), np.array([0.0, 3]), np.array([0.0, 4]))


def test_inplace_without_derivative_raises_in_backward():
    """PyTorch has no derivative for acosh_/asinh_/atanh_ (NotImplementedError in backward)."""
    for name in ("acosh_", "asinh_", "atanh_", "arcsinh_"):
        msg = check_error(lambda L, a: getattr(a.requires_grad_() * 1, name)().sum().backward(),
                          np.full(3, 0.5) + (name == "acosh_"))
        assert "inplace version" in msg
    check(lambda L, a: (a * 1).asinh_(), N(3, 4), grad=False)


def test_nan_to_num_complex_refuses_autograd():
    def f(L, a):
        return L.nan_to_num(a.requires_grad_(True))
    check_error(f, _complex(3))


def test_nondifferentiable_backward_raises_like_torch():
    for fn in (lambda L, a, b: L.heaviside(a, b), lambda L, a, b: L.igamma(a, b)):
        def run(L, a, b):
            a.requires_grad_(True)
            fn(L, a, b).sum().backward()
        check_error(run, POS(3), POS(3))


def test_outputs_without_grad():
    for fn in (ember.isinf, ember.signbit, ember.isposinf, lambda x: ember.gcd(x.long(), x.long())):
        x = ember.ones(3, requires_grad=True)
        assert not fn(x).requires_grad
