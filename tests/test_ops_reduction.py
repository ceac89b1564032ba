"""Reductions against PyTorch: sum/mean/prod, max/min/amax/amin, argmax/argmin, all/any."""
import numpy as np
import pytest

import ember
from oracle import check, check_error, gradcheck, randn, NC

def _tol(x):
    """Half precision rounds differently per element; compare at its resolution.

    (bfloat16 inputs are made inside the lambdas: torch.from_numpy has no bfloat16.)
    """
    dt = (x.arr if isinstance(x, NC) else x).dtype
    return dict(atol=1e-2, rtol=1e-2) if dt == np.float16 else {}
TIES = np.array([[1., 3., 3.], [5., 5., -1.], [2., 2., 2.]], np.float32)
INTS = np.array([[3, -1, 3], [0, 7, 7]], np.int64)
WITH_ZEROS = np.array([[0., 2., 3.], [0., 0., 4.], [1., 2., 3.]], np.float64)
CPLX = (randn(3, 2) + 1j * randn(3, 2, seed=3)).astype(np.complex64)
NAN = np.array([[1., np.nan, 3.], [4., 2., np.nan]], np.float32)


# ------------------------------------------------------------------ sum / mean

SUM_MEAN = [
    ("full", lambda L, a: a.sum(), randn(3, 4)),
    ("dim", lambda L, a: L.sum(a, 1), randn(3, 4)),
    ("neg-dim-keepdim", lambda L, a: a.sum(-1, keepdim=True), randn(2, 3, 4)),
    ("tuple", lambda L, a: a.sum((0, 2)), randn(2, 3, 4)),
    ("empty-tuple", lambda L, a: a.sum(()), randn(2, 3)),
    ("empty", lambda L, a: a.sum(), randn(0, 3)),
    ("empty-dim", lambda L, a: a.sum(0), randn(0, 3)),
    ("0-d", lambda L, a: a.sum(), np.array(2.5, np.float32)),
    ("0-d-dim", lambda L, a: a.sum(0, keepdim=True), np.array(2.5, np.float32)),
    ("nc", lambda L, a: a.sum(0), NC(randn(3, 4))),
    ("int", lambda L, a: a.sum(1), INTS),
    ("int32", lambda L, a: a.sum(), INTS.astype(np.int32)),
    ("bool", lambda L, a: a.sum(), np.array([True, True, False])),
    ("half", lambda L, a: a.sum(1), randn(3, 4, dtype=np.float16)),
    ("bf16", lambda L, a: a.bfloat16().sum(0), randn(3, 4)),
    ("dtype", lambda L, a: a.sum(1, dtype=L.float64), randn(3, 4)),
    ("int8-dtype", lambda L, a: a.sum(dtype=L.int8), np.array([100, 100], np.int8)),
    ("mean", lambda L, a: a.mean(), randn(3, 4)),
    ("mean-tuple", lambda L, a: L.mean(a, (0, -1), keepdim=True), randn(2, 3, 4)),
    ("mean-f64", lambda L, a: a.mean(0), randn(3, 4, dtype=np.float64)),
    ("mean-half", lambda L, a: a.mean(1), randn(3, 4, dtype=np.float16)),
    ("mean-int-dtype", lambda L, a: a.mean(dtype=L.float32), INTS),
    ("mean-empty-dim", lambda L, a: a.mean(1), randn(0, 3)),
]


@pytest.mark.parametrize("name,fn,x", SUM_MEAN, ids=[c[0] for c in SUM_MEAN])
def test_sum_mean(name, fn, x):
    check(fn, x, **_tol(x))


# ----------------------------------------------------------------------- prod

PROD = [
    ("full", lambda L, a: a.prod(), randn(3, 4)),
    ("dim", lambda L, a: L.prod(a, 1), randn(3, 4)),
    ("neg-keepdim", lambda L, a: a.prod(-2, keepdim=True), randn(2, 3, 4)),
    ("zeros-full", lambda L, a: a.prod(), WITH_ZEROS),
    ("one-zero-full", lambda L, a: a.prod(), np.array([2., 0., 3.])),
    ("zeros-dim0", lambda L, a: a.prod(0), WITH_ZEROS),
    ("zeros-dim1", lambda L, a: a.prod(1), WITH_ZEROS),
    ("empty", lambda L, a: a.prod(), randn(0, 3)),
    ("empty-dim", lambda L, a: a.prod(0), randn(0, 3)),
    ("0-d", lambda L, a: a.prod(0), np.array(2.5, np.float32)),
    ("nc", lambda L, a: a.prod(1), NC(randn(3, 4))),
    ("int", lambda L, a: a.prod(), INTS),
    ("bool", lambda L, a: a.prod(), np.array([True, False])),
    ("half", lambda L, a: a.prod(1), randn(2, 3, dtype=np.float16)),
    ("bf16-dtype", lambda L, a: a.bfloat16().prod(dtype=L.float32), randn(2, 3)),
    ("dtype", lambda L, a: a.prod(1, dtype=L.float64), randn(3, 4)),
    ("complex", lambda L, a: a.prod(0), CPLX),
]


@pytest.mark.parametrize("name,fn,x", PROD, ids=[c[0] for c in PROD])
def test_prod(name, fn, x):
    check(fn, x, **_tol(x))


def test_prod_gradcheck():
    gradcheck(lambda L, a: a.prod(1), WITH_ZEROS)
    gradcheck(lambda L, a: a.prod(), np.array([2., 0., 3.]))
    gradcheck(lambda L, a: a.prod(0, keepdim=True), randn(3, 2, dtype=np.float64))


# ------------------------------------------------------------- max/min family

EXTREMES = [
    ("max-full", lambda L, a: a.max(), randn(3, 4)),
    ("min-full", lambda L, a: L.min(a), randn(3, 4)),
    ("max-full-ties", lambda L, a: a.max(), np.array([[1., 5.], [5., 5.]], np.float32)),
    ("min-full-ties", lambda L, a: a.min(), TIES),
    ("max-dim", lambda L, a: L.max(a, 1), randn(3, 4)),
    ("max-dim-ties", lambda L, a: tuple(a.max(1)), TIES),
    ("min-dim-ties", lambda L, a: tuple(L.min(a, 0)), TIES),
    ("max-dim-keepdim", lambda L, a: tuple(a.max(-1, keepdim=True)), randn(2, 3, 4)),
    ("max-dim-kwarg", lambda L, a: tuple(a.max(dim=0)), randn(3, 4)),
    ("max-values-indices", lambda L, a: (a.max(1).values, a.max(1).indices), TIES),
    ("max-nan", lambda L, a: tuple(a.max(1)), NAN),
    ("min-nan-full", lambda L, a: a.min(), NAN),
    ("max-0d", lambda L, a: a.max(), np.array(1.5, np.float32)),
    ("max-0d-dim", lambda L, a: tuple(a.max(0)), np.array(1.5, np.float32)),
    ("max-0d-dim-neg", lambda L, a: tuple(a.min(-1, True)), np.array(1.5, np.float32)),
    ("max-empty-other-dim", lambda L, a: tuple(a.max(1)), randn(0, 3)),
    ("max-nc", lambda L, a: tuple(a.max(0)), NC(randn(3, 4))),
    ("max-int", lambda L, a: (a.max(), *a.max(1)), INTS),
    ("max-bool", lambda L, a: (a.max(), *a.max(0)), np.array([True, False])),
    ("max-half", lambda L, a: (a.max(), *a.max(1)), randn(3, 4, dtype=np.float16)),
    ("max-bf16", lambda L, a: (a.bfloat16().min(), *a.bfloat16().min(1)), randn(3, 4)),
    ("max-f64", lambda L, a: (a.max(), *a.max(1)), randn(3, 4, dtype=np.float64)),
    ("max-binary", lambda L, a, b: L.max(a, b), randn(3, 4), randn(4)),
    ("min-binary", lambda L, a, b: a.min(b), TIES, TIES.T.copy()),
    ("amax", lambda L, a: L.amax(a, 1), randn(3, 4)),
    ("amax-full", lambda L, a: a.amax(), TIES),
    ("amax-ties", lambda L, a: a.amax(1), TIES),
    ("amin-ties-tuple", lambda L, a: L.amin(a, (0, 1)), TIES),
    ("amax-tuple-keepdim", lambda L, a: a.amax((0, -1), keepdim=True), randn(2, 3, 4)),
    ("amin-ties-dim0", lambda L, a: a.amin(0), TIES),
    ("amax-0d", lambda L, a: a.amax(0), np.array(1.5, np.float32)),
    ("amax-empty-other-dim", lambda L, a: a.amax(1), randn(0, 3)),
    ("amax-nc", lambda L, a: a.amax(1), NC(TIES)),
    ("amax-int", lambda L, a: a.amax(0), INTS),
    ("amax-bool", lambda L, a: a.amax(), np.array([True, False])),
    ("amax-half", lambda L, a: a.amax(1), randn(3, 4, dtype=np.float16)),
    ("amax-bf16", lambda L, a: a.bfloat16().amin(0), randn(3, 4)),
    ("argmax", lambda L, a: L.argmax(a), randn(3, 4)),
    ("argmax-ties-first", lambda L, a: (a.argmax(), a.argmax(1), a.argmin(0)), TIES),
    ("argmin-ties-first", lambda L, a: (a.argmin(), a.argmin(1)), TIES),
    ("argmax-keepdim", lambda L, a: (a.argmax(1, keepdim=True), a.argmax(keepdim=True)),
     randn(2, 3, 4)),
    ("argmax-neg", lambda L, a: L.argmin(a, -1), randn(2, 3, 4)),
    ("argmax-nan", lambda L, a: (a.argmax(1), a.argmin(1), a.argmax()), NAN),
    ("argmax-0d", lambda L, a: (a.argmax(), a.argmax(0, keepdim=True)), np.array(1.5, np.float32)),
    ("argmax-empty-other-dim", lambda L, a: a.argmax(1), randn(0, 3)),
    ("argmax-nc", lambda L, a: a.argmax(0), NC(TIES)),
    ("argmax-int", lambda L, a: (a.argmax(), a.argmin(1)), INTS),
    ("argmax-half", lambda L, a: a.argmax(1), randn(3, 4, dtype=np.float16)),
    ("argmax-bf16", lambda L, a: a.bfloat16().argmin(), randn(3, 4)),
]


@pytest.mark.parametrize("name,fn,xs", [(c[0], c[1], c[2:]) for c in EXTREMES],
                         ids=[c[0] for c in EXTREMES])
def test_extremes(name, fn, xs):
    check(fn, *xs)


def test_max_dim_return_type():
    x = ember.tensor([[1., 4.], [3., 2.]])
    r = ember.max(x, 1)
    assert type(r).__name__ == "max" and r._fields == ("values", "indices")
    values, indices = r
    assert values.tolist() == [4., 3.] and indices.tolist() == [1, 0]
    assert r.values is values and r[1] is indices
    assert type(x.min(0)).__name__ == "min"
    assert repr(r).startswith("torch.return_types.max(\nvalues=tensor(")
    assert ember.return_types.max is type(r)


def test_max_min_out():
    check(lambda L, a: tuple(L.max(a, 1, out=(L.empty(0), L.empty(0, dtype=L.int64)))),
          randn(3, 4), grad=False)
    check(lambda L, a: L.amax(a, 0, out=L.empty(0)), randn(3, 4), grad=False)
    check(lambda L, a: L.argmin(a, 1, out=L.empty(0, dtype=L.int64)), randn(3, 4), grad=False)


def test_extreme_gradchecks():
    x = np.array([[1., 3., 3.], [5., 0.5, -1.]])
    gradcheck(lambda L, a: a.amax(1), x)
    gradcheck(lambda L, a: a.max(0).values, x)
    gradcheck(lambda L, a: a.min(), randn(3, 4, dtype=np.float64))


def test_full_max_spreads_evenly_over_ties():
    """PyTorch 1.7: a full max gives every tied element the same share."""
    x = ember.tensor([[2., 7.], [7., 7.]], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0., 1 / 3], [1 / 3, 1 / 3]], rtol=1e-6)


ERRORS = [
    ("max-empty", lambda L, a: a.max(), randn(0, 3)),
    ("min-empty", lambda L, a: L.min(a), randn(0, 3)),
    ("max-empty-dim", lambda L, a: a.max(0), randn(0, 3)),
    ("amax-empty", lambda L, a: a.amax(), randn(0, 3)),
    ("amin-empty-dim", lambda L, a: a.amin(1), randn(2, 0)),
    ("argmax-empty", lambda L, a: a.argmax(), randn(0, 3)),
    ("argmin-empty-dim", lambda L, a: a.argmin(0), randn(0, 3)),
    ("max-bad-dim", lambda L, a: a.max(2), randn(2, 3)),
    ("amax-bad-dim", lambda L, a: a.amax((0, 5)), randn(2, 3)),
    ("amax-dup-dim", lambda L, a: a.amax((0, -2)), randn(2, 3)),
    ("sum-dup-dim", lambda L, a: a.sum((1, 1)), randn(2, 3)),
    ("sum-bad-dim", lambda L, a: a.sum(3), randn(2, 3)),
    ("argmax-bad-dim", lambda L, a: a.argmax(-3), randn(2, 3)),
    ("max-tuple-dim", lambda L, a: a.max((0,)), randn(2, 3)),
    ("prod-tuple-dim", lambda L, a: a.prod((0, 1)), randn(2, 3)),
    ("argmax-bool", lambda L, a: a.argmax(), np.array([True, False])),
    ("argmax-complex", lambda L, a: a.argmax(), np.array([1j, 2], np.complex64)),
    ("max-complex", lambda L, a: a.max(), np.array([1j, 2], np.complex64)),
    ("amax-complex", lambda L, a: a.amax(), np.array([1j, 2], np.complex64)),
    ("mean-int", lambda L, a: a.mean(), INTS),
    ("all-out-float", lambda L, a: L.all(a, 0, out=L.empty(0)), randn(2, 3)),
]


@pytest.mark.parametrize("name,fn,x", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(name, fn, x):
    check_error(fn, x)


def test_empty_max_message():
    msg = check_error(lambda L, a: a.max(), randn(0, 3))
    assert msg == ("max(): Expected reduction dim to be specified for input.numel() == 0. "
                   "Specify the reduction dim with the 'dim' argument.")
    assert "reduction dim 0 to have non-zero size" in check_error(lambda L, a: a.amax(0),
                                                                  randn(0, 3))


# ------------------------------------------------------------------ all / any

LOGICAL = [
    ("all", lambda L, a: (a.all(), a.any()), randn(3, 4)),
    ("dim", lambda L, a: (L.all(a, 1), L.any(a, 0)), np.array([[1., 0.], [2., 3.]], np.float32)),
    ("keepdim-neg", lambda L, a: (a.all(-1, keepdim=True), a.any(-2, True)), INTS),
    ("tuple", lambda L, a: (a.all((0, 1)), a.any((0, 2))), np.arange(12).reshape(2, 3, 2) % 5),
    ("no-dims", lambda L, a: (a.all(dim=()), a.any(dim=())), INTS),
    ("bool", lambda L, a: (a.all(), a.any(0)), np.array([[True, False], [True, True]])),
    ("uint8-keeps-uint8", lambda L, a: (a.all(), a.any(0)), np.array([[1, 0], [3, 2]], np.uint8)),
    ("int8", lambda L, a: (a.all(), a.any(0)), np.array([1, 2], np.int8)),
    ("empty", lambda L, a: (a.all(), a.any(), a.all(1), a.any(0)), randn(0, 3)),
    ("0-d", lambda L, a: (a.all(), a.any(0)), np.array(0.0, np.float32)),
    ("nc", lambda L, a: (a.all(0), a.any(1)), NC(INTS)),
    ("half", lambda L, a: a.all(1), randn(2, 3, dtype=np.float16)),
    ("bf16", lambda L, a: a.bfloat16().any(1), np.zeros((2, 3), np.float32)),
    ("complex", lambda L, a: a.all(), np.array([1j, 0], np.complex64)),
    ("nan", lambda L, a: a.all(), NAN),
    ("out", lambda L, a: L.any(a, out=L.empty(0, dtype=L.bool)), np.array([1, 0], np.uint8)),
]


@pytest.mark.parametrize("name,fn,x", LOGICAL, ids=[c[0] for c in LOGICAL])
def test_all_any(name, fn, x):
    check(fn, x, grad=False)


# ------------------------------------------------------------------ var / std

VAR = [
    ("full", lambda L, f, a: f(a), randn(3, 4)),
    ("dim", lambda L, f, a: f(a, 1), randn(3, 4)),
    ("tuple-keepdim", lambda L, f, a: f(a, (0, -1), keepdim=True), randn(2, 3, 4)),
    ("unbiased-positional", lambda L, f, a: f(a, 1, False, True), randn(3, 4)),
    ("unbiased-only", lambda L, f, a: f(a, False), randn(3, 4)),
    ("correction", lambda L, f, a: f(a, 0, correction=0), randn(3, 4)),
    ("correction-2", lambda L, f, a: f(a, dim=1, correction=2), randn(3, 4)),
    ("0-d", lambda L, f, a: f(a, correction=0), np.array(2., np.float32)),
    ("nc", lambda L, f, a: f(a, 0), NC(randn(3, 4))),
    ("f64", lambda L, f, a: f(a, 1), randn(3, 4, dtype=np.float64)),
    ("half", lambda L, f, a: f(a, 1), randn(3, 4, dtype=np.float16)),
    ("complex", lambda L, f, a: f(a, 0), CPLX),
    ("empty-dim", lambda L, f, a: f(a, 0), randn(0, 3)),
    ("one-element-dof-0", lambda L, f, a: f(a, 1), randn(2, 1)),
]


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning")
@pytest.mark.parametrize("fname", ["var", "std"])
@pytest.mark.parametrize("name,fn,x", VAR, ids=[c[0] for c in VAR])
def test_var_std(fname, name, fn, x):
    check(lambda L, a: fn(L, getattr(L, fname), a), x, **_tol(x))
    check(lambda L, a: fn(L, lambda *r, **k: getattr(r[0], fname)(*r[1:], **k), a), x,
          **_tol(x))


@pytest.mark.parametrize("fname", ["var_mean", "std_mean"])
def test_var_mean(fname):
    check(lambda L, a: getattr(L, fname)(a, 1, keepdim=True), randn(3, 4))
    check(lambda L, a: getattr(L, fname)(a, False), randn(3, 4))
    check(lambda L, a: getattr(L, fname)(a, correction=0), randn(3, 4))


def test_var_std_gradcheck():
    gradcheck(lambda L, a: L.var(a, 1), randn(3, 4, dtype=np.float64))
    gradcheck(lambda L, a: L.std(a, (0, 1), correction=0), randn(3, 4, dtype=np.float64))


def test_var_degrees_of_freedom_warning():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert np.isnan(ember.var(ember.tensor([1.])).item())


@pytest.mark.parametrize("fname", ["var", "std"])
def test_var_std_errors(fname):
    check_error(lambda L, a: getattr(L, fname)(a), INTS)
    check_error(lambda L, a: getattr(L, fname)(a), np.array([True]))
    check_error(lambda L, a: getattr(L, fname)(a, 2), randn(2, 3))
