"""softmax / log_softmax (fused kernels and decompositions) and clamp / clip."""
import warnings

import numpy as np
import pytest

import ember
from oracle import check, check_error, gradcheck, randn, NC

INF = np.array([[0., -np.inf, 1.], [-np.inf, -np.inf, -np.inf], [np.inf, 1., 0.]], np.float32)
BIG = np.array([[1000., 0., -1000.], [88., 89., 90.]], np.float32)

SOFTMAX = [
    ("last", lambda L, f, a: f(a, -1), randn(3, 4)),
    ("dim0", lambda L, f, a: f(a, 0), randn(3, 4)),
    ("3d-middle", lambda L, f, a: f(a, 1), randn(2, 3, 4)),
    ("big", lambda L, f, a: f(a, 1), BIG),
    ("inf", lambda L, f, a: f(a, 1), INF),
    ("0-d", lambda L, f, a: f(a, 0), np.array(1.5, np.float32)),
    ("0-d-neg", lambda L, f, a: f(a, -1), np.array(-3., np.float32)),
    ("empty", lambda L, f, a: f(a, 1), randn(0, 3)),
    ("empty-dim", lambda L, f, a: f(a, 0), randn(0, 3)),
    ("nc", lambda L, f, a: f(a, 0), NC(randn(3, 4))),
    ("f64", lambda L, f, a: f(a, 1), randn(3, 4, dtype=np.float64)),
    ("half", lambda L, f, a: f(a, 1), randn(3, 4, dtype=np.float16)),
    ("bf16", lambda L, f, a: f(a.bfloat16(), 1), randn(3, 4)),
    ("dtype", lambda L, f, a: f(a, 1, dtype=L.float64), randn(3, 4)),
    ("half-to-float", lambda L, f, a: f(a, 0, L.float32), randn(3, 4, dtype=np.float16)),
    ("int-dtype", lambda L, f, a: f(a, 0, dtype=L.float32), np.array([1, 2, 3])),
]


def _tol(x, name=""):
    """Half precision rounds once per element; compare at its resolution."""
    if name == "bf16":
        return dict(atol=1e-2, rtol=1e-2)
    half = isinstance(x, np.ndarray) and x.dtype == np.float16
    return dict(atol=2e-3, rtol=1e-2) if half else {}


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("name,fn,x", SOFTMAX, ids=[c[0] for c in SOFTMAX])
def test_softmax(fname, name, fn, x):
    check(lambda L, a: fn(L, getattr(L, fname), a), x, **_tol(x, name))
    check(lambda L, a: fn(L, lambda t, *r, **k: getattr(t, fname)(*r, **k), a), x,
          **_tol(x, name))


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("name,fn,x", SOFTMAX, ids=[c[0] for c in SOFTMAX])
def test_softmax_decomposition(fname, name, fn, x):
    """The registry's decomp (primitive ember ops) matches PyTorch, gradients too."""
    decomp = ember.ops.get(fname).decomp

    def run(L, a):
        if L is ember:
            return fn(L, lambda t, dim, dtype=None: decomp(t, dim, dtype), a)
        return fn(L, getattr(L, fname), a)
    check(run, x, **_tol(x, name))


def test_softmax_gradcheck():
    gradcheck(lambda L, a: L.softmax(a, 1), randn(3, 4))
    gradcheck(lambda L, a: L.log_softmax(a, 0), randn(3, 4))
    gradcheck(lambda L, a: L.softmax(a, -1) * L.log_softmax(a, -1), randn(2, 3, 2))


def test_softmax_double_backward():
    def fn(L, a):
        y = (L.softmax(a, 1) ** 2).sum() + L.log_softmax(a, 0).exp().pow(3).sum()
        (g,) = L.autograd.grad(y, a, create_graph=True)
        return g
    check(fn, randn(3, 4))


def test_softmax_out_and_tags():
    check(lambda L, a: L.softmax(a, 0, out=L.empty(0)), randn(3), grad=False)
    assert ember.ops.get("softmax").amp_policy == "none"     # as torch's AutocastCPU


def test_implicit_dim_choice():
    from ember.ops.activation import _get_softmax_dim
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        assert _get_softmax_dim("softmax", 3, 2) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [_get_softmax_dim("log_softmax", n, 2) for n in range(5)] == [0, 0, 1, 0, 1]


SOFTMAX_ERRORS = [
    ("int", lambda L, a: L.softmax(a, 0), np.array([1, 2])),
    ("int-last-log", lambda L, a: L.log_softmax(a, 0), np.array([1, 2])),
    ("int-not-last", lambda L, a: L.softmax(a, 0), np.array([[1, 2]])),
    ("int-dtype", lambda L, a: L.softmax(a, 1, L.int64), randn(2, 3)),
    ("bool", lambda L, a: a.softmax(0), np.array([True])),
    ("complex", lambda L, a: L.softmax(a, 0), np.array([1j], np.complex64)),
    ("bad-dim", lambda L, a: L.softmax(a, 2), randn(2, 3)),
    ("none-dim", lambda L, a: L.softmax(a, None), randn(2, 3)),
]


@pytest.mark.parametrize("name,fn,x", SOFTMAX_ERRORS, ids=[c[0] for c in SOFTMAX_ERRORS])
def test_softmax_errors(name, fn, x):
    check_error(fn, x)


def test_softmax_int_message():
    msg = check_error(lambda L, a: L.softmax(a, 0), np.array([1, 2]))
    assert msg == "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"


# ----------------------------------------------------------------------- clamp

X = np.array([[-2., -0.5, 0., 0.5], [1., 1.5, 2., 3.]], np.float32)
LO = np.array([-1., 0., 0.5, 2.], np.float32)
HI = np.array([0., 1., 0.5, 1.], np.float32)        # last column: min > max

CLAMP = [
    ("scalars", lambda L, a: L.clamp(a, -0.5, 1.5), X),
    ("bounds-tie", lambda L, a: L.clamp(a, 0., 2.), X),
    ("min-only", lambda L, a: L.clamp(a, min=0.5), X),
    ("max-only", lambda L, a: a.clamp(max=1.), X),
    ("min>max", lambda L, a: L.clamp(a, 1., 0.), X),
    ("clip", lambda L, a: L.clip(a, -1, 1), X),
    ("clip-method", lambda L, a: a.clip(max=0), X),
    ("clamp_min", lambda L, a: (L.clamp_min(a, 0.), a.clamp_min(1.)), X),
    ("clamp_max", lambda L, a: (L.clamp_max(a, 0.), a.clamp_max(1.)), X),
    ("nan", lambda L, a: L.clamp(a, 0, 0.5), np.array([1., np.nan, -1.], np.float32)),
    ("nan-bound", lambda L, a: L.clamp(a, float("nan"), 0.5), np.array([1., 2.], np.float32)),
    ("0-d", lambda L, a: L.clamp(a, 0, 1), np.array(1.5, np.float32)),
    ("empty", lambda L, a: L.clamp(a, 0, 1), randn(0, 3)),
    ("nc", lambda L, a: L.clamp(a, -0.5, 0.5), NC(randn(3, 4))),
    ("f64", lambda L, a: L.clamp(a, -0.5, 0.5), randn(3, 4, dtype=np.float64)),
    ("half", lambda L, a: L.clamp(a, -0.5, 0.5), randn(3, 4, dtype=np.float16)),
    ("bf16", lambda L, a: L.clamp(a.bfloat16(), -0.5, 0.5), randn(3, 4)),
    ("int", lambda L, a: L.clamp(a, -1, 2), np.arange(-3, 4)),
    ("int-float-bound", lambda L, a: L.clamp(a, min=1.5), np.arange(-3, 4)),
    ("int8", lambda L, a: L.clamp(a, max=2), np.arange(-3, 4, dtype=np.int8)),
    ("bool-int-bound", lambda L, a: L.clamp(a, min=0), np.array([True, False])),
    ("out", lambda L, a: L.clamp(a, 0, 1, out=L.empty(0)), X),
]


@pytest.mark.parametrize("name,fn,x", CLAMP, ids=[c[0] for c in CLAMP])
def test_clamp(name, fn, x):
    check(fn, x, grad=name != "out")


CLAMP_TENSORS = [
    ("both", lambda L, a, lo, hi: L.clamp(a, lo, hi), X, LO, HI),
    ("min-tensor", lambda L, a, lo, hi: L.clamp(a, min=lo), X, LO, HI),
    ("max-tensor", lambda L, a, lo, hi: a.clamp(max=hi), X, LO, HI),
    ("clamp_min-tensor", lambda L, a, lo, hi: L.clamp_min(a, lo), X, LO, HI),
    ("broadcast-self", lambda L, a, lo, hi: L.clamp(lo, a, hi), X, LO, HI),
    ("promote", lambda L, a, lo, hi: L.clamp(a, lo, hi), X, LO.astype(np.float64), HI),
    ("0-d-bound", lambda L, a, lo, hi: L.clamp(a, lo, hi), X, np.array(0., np.float32),
     np.array(1., np.float32)),
    ("int-float-tensor", lambda L, a, lo, hi: L.clamp(a, lo), np.arange(4), LO, HI),
    ("nc", lambda L, a, lo, hi: L.clamp(a, lo, hi), NC(randn(4, 4)), NC(randn(4, 4, seed=1)),
     HI),
]


@pytest.mark.parametrize("name,fn,a,lo,hi", CLAMP_TENSORS, ids=[c[0] for c in CLAMP_TENSORS])
def test_clamp_tensor_bounds(name, fn, a, lo, hi):
    # torch's own backward fails when self broadcasts up to a bound ("output with shape")
    check(fn, a, lo, hi, grad=name != "broadcast-self")


def test_clamp_gradcheck():
    x = randn(3, 4, dtype=np.float64)
    lo = randn(4, dtype=np.float64, seed=4) - 0.5
    hi = lo + np.abs(randn(3, 4, dtype=np.float64, seed=2))
    gradcheck(lambda L, a, b, c: L.clamp(a, b, c), x, lo, hi)
    gradcheck(lambda L, a: L.clamp(a, -0.3, 0.3), x)


INPLACE = [
    ("clamp_", lambda L, a: a.clone().clamp_(-0.5, 0.5), X),
    ("clip_", lambda L, a: a.clone().clip_(max=0.5), X),
    ("clamp_min_", lambda L, a: a.clone().clamp_min_(0.), X),
    ("clamp_max_", lambda L, a: a.clone().clamp_max_(0.), X),
    ("function", lambda L, a: L.clamp_(a.clone(), 0, 1), X),
    ("int", lambda L, a: a.clone().clamp_(0, 2), np.arange(-3, 4)),
]


@pytest.mark.parametrize("name,fn,x", INPLACE, ids=[c[0] for c in INPLACE])
def test_clamp_inplace(name, fn, x):
    check(fn, x)


def test_clamp_inplace_tensor_bounds_and_version():
    check(lambda L, a, lo: a.clone().clamp_(lo), X, LO)
    t = ember.tensor([-1., 0.5, 2.])
    v = t._version
    assert t.clamp_(0, 1) is t and t.tolist() == [0., 0.5, 1.] and t._version > v


CLAMP_ERRORS = [
    ("no-bounds", lambda L, a: L.clamp(a), X),
    ("none-none", lambda L, a: a.clamp(None, None), X),
    ("inplace-no-bounds", lambda L, a: a.clamp_(), X),
    ("complex", lambda L, a: L.clamp(a, 0), np.array([1j], np.complex64)),
    ("int-inplace-float", lambda L, a: a.clone().clamp_(min=1.5), np.arange(3)),
    ("shape", lambda L, a: L.clamp(a, L.zeros(3)), X),
    ("mixed-bounds", lambda L, a: L.clamp(a, L.zeros(4), 1.), X),
    ("mixed-bounds-inplace", lambda L, a: a.clamp_(0., L.ones(4)), X),
]


@pytest.mark.parametrize("name,fn,x", CLAMP_ERRORS, ids=[c[0] for c in CLAMP_ERRORS])
def test_clamp_errors(name, fn, x):
    check_error(fn, x)


def test_clamp_error_message():
    msg = check_error(lambda L, a: L.clamp(a), X)
    assert msg == "torch.clamp: At least one of 'min' or 'max' must not be None"
