"""OpInfo tables against PyTorch: cumsum, cumprod, cummax, cummin, logcumsumexp."""
import numpy as np
import pytest

import ember
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64, C64, C128
from oracle import NC, check, randn

A = randn(3, 4)
B = randn(2, 3, 4)
EMPTY = randn(0, 3)
ZD = np.array(1.5, np.float32)
INTS = np.array([[3, -1, 0], [0, 7, 7]], np.int64)
BOOLS = np.array([[True, False, True], [False, False, True]])
NANS = np.array([[1., np.nan, 3., 5.], [np.nan, 2., np.nan, -1.], [-2., 0.5, 4., np.inf]],
                np.float32)
TIES = np.array([[1., 3., 3., 2.], [5., 5., -1., 5.], [2., 2., 2., 2.]], np.float32)
WITH_ZEROS = np.array([[0., 2., 0., 3.], [1., 0., 4., 2.], [0., 0., 0., 1.],
                       [2., 3., 0., 5.]], np.float32)
CPLX = (randn(3, 4) + 1j * randn(3, 4, seed=9)).astype(np.complex64)
CPLX_ZEROS = (WITH_ZEROS * (1 + 0.5j)).astype(np.complex64)
BIG = np.array([[1000., 1001., -1000.], [-50., 30., 1e4]], np.float32)

OPS = [
    OpInfo("cumsum", [S(A, 1), S(A, 0), S(B, -1), S(B, -3), S(EMPTY, 0), S(EMPTY, 1), S(ZD, 0),
                      S(ZD, -1), S(NC(A), 1), S(INTS, 1), S(INTS.astype(np.int8), 0),
                      S(BOOLS, 1), S(NANS, 1, grad=False)],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(A, 2), E(A), E(ZD, 1)]),
    OpInfo("cumsum_complex", [S(CPLX, 1)], fn=lambda L, a, d: L.cumsum(a, d),
           dtypes=(C64, C128)),
    OpInfo("Tensor.cumsum", [S(A, dim=-1)]),
    OpInfo("cumsum_dtype", [S(A), S(INTS)], fn=lambda L, a: L.cumsum(a, 1, dtype=L.float64)),
    OpInfo("cumsum_int_dtype", [S(A * 3)], fn=lambda L, a: L.cumsum(a, 0, dtype=L.int32),
           grad=False),
    OpInfo("cumsum_half_dtype", [S(INTS)], fn=lambda L, a: L.cumsum(a, 1, dtype=L.float16)),
    OpInfo("cumsum_bf16", [S(A)], fn=lambda L, a: L.cumsum(a.bfloat16(), 1), grad=False,
           atol=3e-2, rtol=3e-2),
    OpInfo("cumsum_", [S(A), S(INTS)], fn=lambda L, a: a.clone().cumsum_(1)),
    OpInfo("cumprod", [S(A, 1), S(B, -2), S(WITH_ZEROS, 1), S(WITH_ZEROS, 0), S(EMPTY, 0),
                       S(ZD, 0), S(NC(A), 1), S(NC(WITH_ZEROS), 0), S(INTS, 1), S(BOOLS, 0),
                       S(NANS, 1, grad=False)],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(A, 2), E(A)]),
    OpInfo("cumprod_complex", [S(CPLX, 1), S(CPLX_ZEROS, 1), S(CPLX_ZEROS, 0)],
           fn=lambda L, a, d: L.cumprod(a, d), dtypes=(C64, C128),
           gradcheck_dtypes=(C128,)),
    OpInfo("Tensor.cumprod", [S(WITH_ZEROS, -1)]),
    OpInfo("cumprod_dtype", [S(A), S(INTS)], fn=lambda L, a: L.cumprod(a, 0, dtype=L.float64)),
    OpInfo("cumprod_", [S(A), S(WITH_ZEROS)], fn=lambda L, a: a.clone().cumprod_(0)),
    OpInfo("cummax", [S(A, 1), S(B, -1), S(EMPTY, 0), S(EMPTY, 1), S(ZD, 0), S(NC(A), 0),
                      S(INTS, 1), S(BOOLS, 1), S(NANS, 1, grad=False), S(TIES, 1, grad=False)],
           fn=lambda L, a, d: tuple(L.cummax(a, d)), dtypes=(F32, F64, F16),
           errors=[E(CPLX, 0), E(A, 2), E(A)]),
    OpInfo("cummin", [S(A, 1), S(B, 0), S(EMPTY, 0), S(ZD, -1), S(NC(A), 1), S(INTS, 1),
                      S(BOOLS, 0), S(NANS, 1, grad=False), S(TIES, 0, grad=False)],
           fn=lambda L, a, d: tuple(L.cummin(a, d)), dtypes=(F32, F64, F16),
           errors=[E(CPLX, 0), E(A, -3)]),
    OpInfo("cummax_names", [S(A, 0)], fn=lambda L, a, d: (a.cummax(d).values, a.cummax(d).indices)),
    OpInfo("cummin_bf16", [S(A, 1)], fn=lambda L, a, d: tuple(a.bfloat16().cummin(d)), grad=False),
    OpInfo("logcumsumexp", [S(A, 1), S(B, -1), S(EMPTY, 0), S(ZD, 0), S(NC(A), 1), S(BIG, 1),
                            S(BIG, 0), S(NANS, 1, grad=False),
                            S(np.array([-np.inf, -np.inf, 1., np.inf], np.float32), 0,
                              grad=False)],
           dtypes=(F32, F64, F16), gradcheck_dtypes=(F64, C128),
           errors=[E(INTS, 0), E(BOOLS, 0), E(A, 3), E(A)]),
    # complex rows compare values; complex gradients by gradcheck (torch's has the conj bit,
    # which the oracle cannot read)
    OpInfo("logcumsumexp_complex", [S(CPLX, 1, grad=False), S(CPLX, 0, grad=False)],
           fn=lambda L, a, d: L.logcumsumexp(a, d), dtypes=(C64, C128), gradcheck_dtypes=(C128,)),
    OpInfo("Tensor.logcumsumexp", [S(A, dim=0)]),
    OpInfo("logcumsumexp_bf16", [S(A, 1)], fn=lambda L, a, d: L.logcumsumexp(a.bfloat16(), d),
           grad=False, atol=3e-2, rtol=3e-2),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


@pytest.mark.parametrize("fn", [lambda L, a: L.cummax(a, 1).values,
                                lambda L, a: L.cummin(a, 0).values,
                                lambda L, a: L.cummax(a, 0).values])
def test_tie_gradients_go_to_the_returned_index(fn):
    """Ties take the later index (PyTorch's >=), and only that index gets the gradient."""
    check(fn, TIES)
    check(fn, NANS)


def test_out_arguments():
    check(lambda L, a: L.cumsum(a, 1, out=L.empty(0)), A, grad=False)
    check(lambda L, a: L.cumsum(a, 1, out=L.empty(0, dtype=L.int64)), A, grad=False)
    check(lambda L, a: L.logcumsumexp(a, 1, out=L.empty(0)), A, grad=False)
    check(lambda L, a: L.cumprod(a, 0, out=L.empty(0)), A, grad=False)
    check(lambda L, a: tuple(L.cummax(a, 0, out=(L.empty(0), L.empty(0, dtype=L.int64)))), A,
          grad=False)


def test_inplace_dtype_mismatch():
    from oracle import check_error
    check_error(lambda L, a: a.cumsum_(0, dtype=L.float64), A)


def test_double_backward():
    from ember.autograd import gradgradcheck
    cases = [(lambda a: ember.cumprod(a, 1), A), (lambda a: ember.cumprod(a, 0), WITH_ZEROS),
             (lambda a: ember.logcumsumexp(a, 1), A), (lambda a: ember.cumsum(a * a, 0), A),
             (lambda a: ember.cummax(a * a, 1).values, A)]   # (zeros would tie in cummax)
    for fn, data in cases:
        x = ember.from_numpy(data.astype(np.float64)).requires_grad_(True)
        assert gradgradcheck(fn, (x,))


def test_complex_logcumsumexp_gradcheck():
    from oracle import gradcheck
    gradcheck(lambda L, a: L.logcumsumexp(a, 1), CPLX.astype(np.complex128))
