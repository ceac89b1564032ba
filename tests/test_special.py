"""ember.special against torch.special: values, dtypes, gradients, special values, errors."""
import numpy as np
import pytest

from oracle import check, check_error, NC, torch
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, I64, B
import ember

INF, NAN = np.inf, np.nan
SPECIAL = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 30.0])


def gen(lo, hi):
    return lambda *shape, seed=0: np.random.default_rng(seed).uniform(lo, hi, shape)


N = lambda *shape, seed=0: np.random.default_rng(seed).standard_normal(shape)   # noqa: E731
POS = gen(0.2, 3.0)
PROB = gen(0.02, 0.98)


def samples(g, special=SPECIAL, grad=True):
    return [S(g(3, 4), grad=grad), S(g(0, 3), grad=False), S(g(), grad=grad),
            S(NC(g(3, 5, seed=1)), grad=grad), S(special, grad=False)]


def row(name, g, dtypes=(F32, F64), grad=True, special=SPECIAL, **kw):
    rows = [OpInfo("special." + name, samples(g, special, grad), grad=grad, **kw)]
    if dtypes != (F32, F64):
        rows.append(OpInfo("special." + name, [S(g(2, 3))], dtypes=dtypes, grad=False,
                           gradcheck_dtypes=()))
    return rows


WITH_HALF = (F16, I64, B)
NO_HALF = (I64, B)
UNARY = [
    ("erfcx", N, NO_HALF), ("i0e", N, WITH_HALF), ("i1", N, WITH_HALF), ("i1e", N, WITH_HALF),
    ("ndtr", N, WITH_HALF), ("ndtri", PROB, NO_HALF), ("log_ndtr", N, NO_HALF),
    ("entr", POS, WITH_HALF), ("expit", N, WITH_HALF), ("gammaln", POS, WITH_HALF),
    ("psi", POS, WITH_HALF), ("digamma", POS, WITH_HALF), ("erf", N, WITH_HALF),
    ("erfc", N, WITH_HALF), ("erfinv", gen(-0.9, 0.9), WITH_HALF), ("exp2", N, WITH_HALF),
    ("expm1", N, WITH_HALF), ("log1p", POS, WITH_HALF), ("i0", N, WITH_HALF),
    ("sinc", N, WITH_HALF), ("logit", PROB, WITH_HALF), ("round", N, (F16,)),
]
NONDIFF = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
           "airy_ai"]

OPS = [r for n, g, d in UNARY for r in row(n, g, d)]
OPS += [r for n in NONDIFF for r in row(n, POS if "y" in n or "k" in n else N, NO_HALF,
                                         grad=False, atol=1e-4, rtol=1e-3)]
OPS += [
    OpInfo("special.polygamma", [S(0, POS(3, 4)), S(2, POS(2, 3)), S(1, NC(POS(3, 5)))],
           fn=lambda L, n, x: L.special.polygamma(n, x)),
    OpInfo("special.multigammaln", [S(gen(2, 4)(3, 4), 2), S(gen(3, 5)(2, 3), 4)],
           fn=lambda L, x, p: L.special.multigammaln(x, p)),
    OpInfo("special.logit", [S(gen(-0.2, 1.2)(3, 4), eps=0.05)],
           fn=lambda L, x, eps: L.special.logit(x, eps=eps)),
    OpInfo("special.round", [S(N(3, 4) * 30, decimals=1), S(N(3, 4) * 30, decimals=-1)],
           fn=lambda L, x, decimals: L.special.round(x, decimals=decimals)),
    OpInfo("special.xlogy", [S(N(3, 4), POS(3, 4)), S(N(2, 3), POS(3)), S(2.0, POS(3)),
                             S(N(3), 0.5)], dtypes=(F32, F64, I64)),
    OpInfo("special.xlog1py", [S(N(3, 4), POS(3, 4)), S(N(2, 3), POS(3)), S(2.0, POS(3)),
                               S(N(3), 0.5), S(NC(N(3, 5)), POS(3, 5)),
                               S(np.array([0.0, 0.0, 1.0, 2.0, 0.0]),
                                 np.array([-1.0, 2.0, 0.0, NAN, -2.0]), grad=False)],
           dtypes=(F32, F64, F16, I64)),
    OpInfo("special.zeta", [S(POS(3, 4) + 1, POS(3, 4)), S(POS(2, 3) + 1, POS(3)),
                            S(2.0, POS(3)), S(POS(3) + 1, 0.5),
                            S(np.array([1.0, 2.0, INF, NAN, 0.5, 3.0]),
                              np.array([1.0, 0.0, 1.0, 1.0, 1.0, -1.5]))],
           dtypes=(F32, F64, I64), grad=False,
           errors=[E(np.ones(3, F16), np.ones(3, F16)), E(np.ones(3, np.complex64), 1.0)]),
    OpInfo("special.gammainc", [S(POS(3, 4), POS(3, 4, seed=1)), S(POS(2, 3), POS(3)),
                                S(np.array([0.5, 1.0, INF, 2.0, 0.0]),
                                  np.array([0.0, INF, 1.0, -1.0, 1.0]))],
           dtypes=(F32, F64, F16), grad=False,
           errors=[E(np.ones(3, np.int64), np.ones(3, np.int64))]),
    OpInfo("special.gammaincc", [S(POS(3, 4), POS(3, 4, seed=1))], grad=False),
    OpInfo("special.softmax", [S(N(3, 4), 1), S(N(3, 4), 0, dtype=None), S(N(0, 2), -1)],
           fn=lambda L, x, d, dtype=None: L.special.softmax(x, d, dtype=dtype)),
    OpInfo("special.log_softmax", [S(N(3, 4), 1), S(NC(N(3, 5)), -1)],
           fn=lambda L, x, d: L.special.log_softmax(x, d)),
    OpInfo("special.softmax-dtype", [S(N(3, 4), 1)],
           fn=lambda L, x, d: L.special.softmax(x, d, dtype=L.float64)),
]
ERRORS = [("erfcx", [E(np.ones(3, F16)), E(np.ones(3, np.complex64))]),
          ("ndtri", [E(np.ones(3, F16))]), ("log_ndtr", [E(np.ones(3, F16))]),
          ("bessel_j0", [E(np.ones(3, F16)), E(np.ones(3, np.complex64))]),
          ("i1", [E(np.ones(3, np.complex64))]),
          ("round", [E(np.ones(3, np.int64)), E(np.ones(3, bool))]), ("entr", [E(np.ones(3, np.complex64))]),
          ("xlog1py", [E(1.0, 2.0), E(np.ones(3, np.complex64), np.ones(3)),
                       E(np.ones(3), np.ones(4))])]
OPS += [OpInfo(f"special.{n}-errors", [], errors=e,
               fn=(lambda n: lambda L, *a: getattr(L.special, n)(*a))(n)) for n, e in ERRORS]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


SHARED = ["erf", "erfc", "erfinv", "expm1", "exp2", "log1p", "i0", "sinc",
          "digamma", "polygamma", "xlogy", "logit"]


@pytest.mark.parametrize("name", SHARED)
def test_shared_functions_are_torchs(name):
    """torch.special.erf is torch.erf's op: the same ember function, one registry op."""
    assert getattr(ember.special, name) is getattr(ember, name)


def test_aliases():
    assert ember.special.psi is ember.special.digamma
    assert ember.special.gammaln is ember.lgamma
    assert ember.special.expit is ember.sigmoid
    assert ember.special.multigammaln is ember.mvlgamma
    assert ember.special.gammainc is ember.igamma and ember.special.gammaincc is ember.igammac


@pytest.mark.parametrize("name", NONDIFF)
def test_bessel_family_is_not_differentiable(name):
    x = ember.ones(3, requires_grad=True)
    assert getattr(torch.special, name)(torch.ones(3, requires_grad=True)).requires_grad is False
    assert getattr(ember.special, name)(x).requires_grad is False


def test_out_variants():
    check(lambda L, a: L.special.erfcx(a, out=L.empty(0)), N(3, 4), grad=False)
    check(lambda L, a, b: L.special.xlog1py(a, b, out=L.empty(0)), N(3, 4), POS(4), grad=False)
    check(lambda L, a: L.special.i1e(a, out=L.empty(0, dtype=L.float64)),
          N(3).astype(np.float32), grad=False)
    check_error(lambda L, a: L.special.ndtr(a, out=L.empty(0, dtype=L.int64)), N(3))


def test_zeta_backward_raises_like_torch():
    def f(L, a, b):
        a.requires_grad_(True)
        L.special.zeta(a, b).sum().backward()
    msg = check_error(f, POS(3) + 1, POS(3))
    assert "zeta" in msg


def test_gammainc_grad_wrt_x():
    check(lambda L, a, x: L.special.gammainc(a.detach(), x), POS(3, 4), POS(3, 4, seed=1))
    check(lambda L, a, x: L.special.gammaincc(a.detach(), x), POS(3, 4), POS(4, seed=1))


def test_logsumexp():
    if not hasattr(ember, "logsumexp"):
        pytest.skip("ember.logsumexp is not there yet (reductions)")
    check(lambda L, a: L.special.logsumexp(a, 1), N(3, 4))
    check(lambda L, a: L.special.logsumexp(a, (0, 1), keepdim=True), N(3, 4))


def test_import_does_not_load_scipy():
    import subprocess
    import sys
    code = "import sys, ember; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
