"""OpInfo tables against PyTorch: nansum, nanmean, logsumexp, norm, dist, count_nonzero,
aminmax, and var/std/var_mean/std_mean with correction=."""
import math

import numpy as np
import pytest

import ember
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, C64, C128
from oracle import NC, check, randn

A = randn(3, 4)
A2 = randn(3, 4, seed=5)
B = randn(2, 3, 4)
EMPTY = randn(0, 3)
ZD = np.array(1.5, np.float32)
INTS = np.array([[3, -1, 0], [0, 7, 7]], np.int64)
BOOLS = np.array([[True, False, True], [False, False, True]])
NANS = np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan], [-2., 0.5, 4.]], np.float32)
INFS = np.array([[np.inf, 1., 2.], [-np.inf, -np.inf, -np.inf], [np.inf, -np.inf, 0.]],
                np.float32)
TIES = np.array([[1., 3., 3.], [5., 5., -1.], [2., 2., 2.]], np.float32)
WITH_ZEROS = np.array([[0., 2., 0.], [1., 0., 4.], [0., 0., 0.]], np.float32)
CPLX = (randn(3, 4) + 1j * randn(3, 4, seed=9)).astype(np.complex64)


def _skip_without_svdvals(L):
    if L is ember and not hasattr(ember.linalg, "svdvals"):
        pytest.skip("norm(p='nuc') composes ember.linalg.svdvals, which does not exist yet")


def _nuc(L, a, **kw):
    _skip_without_svdvals(L)
    return L.norm(a, "nuc", **kw)


OPS = [
    OpInfo("nansum", [S(A), S(A, 1), S(B, -1, keepdim=True), S(B, (0, 2)), S(EMPTY), S(EMPTY, 0),
                      S(ZD), S(ZD, 0), S(NC(A), 0), S(NANS), S(NANS, 1), S(INTS), S(INTS, 1),
                      S(BOOLS, 0)],
           dtypes=(F32, F64, F16),
           errors=[E(A, 2), E(CPLX), E(A, (0, 0))]),
    OpInfo("Tensor.nansum", [S(NANS, -1, keepdim=True)]),
    OpInfo("nansum_dtype", [S(NANS), S(INTS)], fn=lambda L, a: L.nansum(a, 1, dtype=L.float64)),
    OpInfo("nansum_bf16", [S(NANS, 1)], fn=lambda L, a, d: L.nansum(a.bfloat16(), d), grad=False,
           atol=1e-2, rtol=1e-2),
    OpInfo("nanmean", [S(NANS, grad=False), S(NANS, 1, grad=False), S(NANS, 0, keepdim=True),
                       S(EMPTY, 0), S(ZD), S(NC(A), 1), S(B, (0, -1), keepdim=True)],
           dtypes=(F32, F64, F16), errors=[E(INTS), E(CPLX), E(A, 3)]),
    OpInfo("Tensor.nanmean", [S(NANS, -1, grad=False)]),
    OpInfo("logsumexp", [S(A, 1), S(B, (0, 2)), S(B, -1, keepdim=True), S(EMPTY, 0),
                         S(EMPTY, 1), S(ZD, 0), S(NC(A), 0), S(A * 1000, 1), S(INTS, 1),
                         S(BOOLS, 0), S(INFS, 1, grad=False), S(B, [0, 1, 2])],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(A, 2), E(A)]),
    OpInfo("logsumexp_complex", [S(CPLX, 1), S(CPLX, (0, 1), keepdim=True)],
           fn=lambda L, a, *d, **k: L.logsumexp(a, *d, **k), dtypes=(C64, C128)),
    OpInfo("Tensor.logsumexp", [S(A, -1, True)]),
    OpInfo("norm", [S(A), S(A, 1), S(A, 3), S(A, 0), S(A, math.inf), S(A, -math.inf),
                    S(A, 0.5), S(A, 1.5), S(A, "fro"), S(A, 2, 1, True), S(A, -1, 0),
                    S(B, "fro", (0, 1), True), S(B, 2, (0, 2)), S(B, 3, None, True),
                    S(EMPTY), S(EMPTY, 1, 0), S(EMPTY, math.inf, 1), S(ZD), S(ZD, 1, 0),
                    S(NC(A), 1, 0), S(np.zeros((2, 3), np.float32)),
                    S(np.zeros((2, 3), np.float32), 3, 1), S(TIES, math.inf, 1, grad=False),
                    S(NANS, 2, 1, grad=False)],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(INTS), E(A, "abc"), E(A, 2, 3), E(randn(3), "nuc"), E(EMPTY, math.inf),
                   E(EMPTY, -1, 0), E(B, "fro", (0, 1, 2)), E(A, 2, (0, 0))]),
    OpInfo("norm_complex", [S(CPLX), S(CPLX, 1, 0), S(CPLX, math.inf, 1, True)],
           fn=lambda L, a, *r: L.norm(a, *r), dtypes=(C64, C128)),
    OpInfo("Tensor.norm", [S(A), S(A, 1, 1, True), S(B, "fro", (1, 2))]),
    OpInfo("norm_dtype", [S(A)], fn=lambda L, a: L.norm(a, dtype=L.float64)),
    OpInfo("norm_bf16", [S(A, 3)], fn=lambda L, a, p: L.norm(a.bfloat16(), p, 1), grad=False,
           atol=2e-2, rtol=2e-2),
    OpInfo("norm_nuc", [S(A), S(B, dim=(0, 2), keepdim=True)], fn=_nuc),
    OpInfo("norm_errors", [], errors=[E(A)], fn=lambda L, a: L.norm(a, dtype=L.int64)),
    OpInfo("dist", [S(A, A2), S(A, A2[0]), S(A, A2, 1), S(A, A2, math.inf), S(A, A2, 0.5),
                    S(EMPTY, EMPTY), S(ZD, ZD * 2), S(NC(A), A2), S(A, A2, 0, grad=False)],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(INTS, INTS), E(A, randn(5))]),
    OpInfo("Tensor.dist", [S(A, A2, 3)]),
    OpInfo("count_nonzero", [S(WITH_ZEROS), S(WITH_ZEROS, 0), S(WITH_ZEROS, (0, 1)),
                             S(WITH_ZEROS, -1), S(EMPTY, 0), S(ZD), S(ZD, 0), S(BOOLS, 1),
                             S(INTS), S(NC(WITH_ZEROS), 1), S(NANS, 0)],
           grad=False, dtypes=(F32, F64, F16, C64),
           errors=[E(A, (0, 0)), E(A, 3)]),
    OpInfo("Tensor.count_nonzero", [S(WITH_ZEROS, [1])], grad=False),
    OpInfo("aminmax", [S(A), S(A, dim=1), S(A, dim=-1, keepdim=True), S(A, keepdim=True),
                       S(TIES, grad=False), S(TIES, dim=0, grad=False), S(ZD), S(ZD, dim=0),
                       S(EMPTY, dim=1), S(INTS), S(INTS, dim=0), S(BOOLS), S(NC(A), dim=0),
                       S(NANS, dim=1, grad=False)],
           fn=lambda L, a, **k: tuple(L.aminmax(a, **k)), dtypes=(F32, F64, F16),
           errors=[E(EMPTY), E(EMPTY, dim=0), E(CPLX), E(A, dim=(0,)), E(A, dim=2)]),
    OpInfo("Tensor.aminmax_names", [S(A, dim=0)],
           fn=lambda L, a, **k: (a.aminmax(**k).min, a.aminmax(**k).max)),
    OpInfo("var", [S(A, 1, correction=0.5), S(A, correction=2), S(B, (0, 2), correction=0,
                   keepdim=True), S(A, True), S(A, 1, False), S(ZD, correction=0), S(EMPTY, 0),
                   S(NC(A), 0, correction=3, grad=False), S(CPLX, 1)],
           dtypes=(F32, F64, F16), errors=[E(INTS), E(A, 3)]),
    OpInfo("var_conflicting_args", [], errors=[E(A)],
           fn=lambda L, a: L.var(a, 1, unbiased=False, correction=2)),
    OpInfo("std", [S(A, 1, correction=0.5), S(B, (-1, 0), correction=0, keepdim=True),
                   S(A, False), S(np.ones((3, 2), np.float32), 0), S(CPLX, 0, correction=0)],
           dtypes=(F32, F64, F16), errors=[E(INTS)]),
    OpInfo("var_mean", [S(A, 1, correction=1.5), S(A, True), S(B, (0, 2), keepdim=True),
                        S(A, correction=0)], fn=lambda L, *a, **k: L.var_mean(*a, **k)),
    OpInfo("std_mean", [S(A, 1, correction=0), S(B, (0, -1), keepdim=True), S(A, False)]),
    OpInfo("var_bf16", [S(A)], fn=lambda L, a: L.var(a.bfloat16(), 1), grad=False,
           atol=2e-2, rtol=2e-2),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


def test_norm_keepdim_keeps_every_reduced_dim():
    """PyTorch 1.7: norm(..., keepdim=True) keeps each reduced dim, for 'fro' and numbers."""
    x = ember.from_numpy(B)
    assert tuple(ember.norm(x, "fro", dim=(0, 2), keepdim=True).shape) == (1, 3, 1)
    assert tuple(x.norm(3, keepdim=True).shape) == (1, 1, 1)
    assert tuple(x.norm(keepdim=True).shape) == (1, 1, 1)


def test_aminmax_is_a_named_tuple_with_out():
    x = ember.from_numpy(A)
    lo, hi = ember.empty(0), ember.empty(0)
    r = ember.aminmax(x, dim=0, out=(lo, hi))
    assert type(r).__name__ == "aminmax" and r.min is lo and r.max is hi
    np.testing.assert_array_equal(hi.numpy(), A.max(0))


def test_out_arguments():
    check(lambda L, a: L.nansum(a, 1, out=L.empty(0)), NANS, grad=False)
    check(lambda L, a: L.logsumexp(a, 1, out=L.empty(0)), A, grad=False)
    check(lambda L, a: L.norm(a, 2, 1, out=L.empty(0)), A, grad=False)
    check(lambda L, a: L.nanmean(a, 0, out=L.empty(0)), NANS, grad=False)


def test_logsumexp_gradient_is_softmax():
    x = ember.from_numpy(A.astype(np.float64)).requires_grad_(True)
    ember.logsumexp(x, 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ember.softmax(x.detach(), 1).numpy(), rtol=1e-12)


def test_double_backward():
    from oracle import gradcheck
    from ember.autograd import gradgradcheck
    for fn in (lambda a: ember.logsumexp(a, 1), lambda a: ember.norm(a, 3, 1),
               lambda a: ember.norm(a, 1.5), lambda a: ember.nansum(a * a, 0)):
        x = ember.from_numpy(A.astype(np.float64)).requires_grad_(True)
        assert gradgradcheck(fn, (x,))
    gradcheck(lambda L, a: L.norm(a, 0.5, 0), A)


@pytest.mark.parametrize("fn", [lambda L, a: L.nanmean(a, 1), lambda L, a: L.nanmean(a),
                                lambda L, a: a.nansum(0)])
def test_nan_gradients(fn):
    """NaNs (and all-NaN rows) get PyTorch's gradients: zero at NaN, NaN for an empty count."""
    check(fn, NANS)
