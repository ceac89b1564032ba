"""OpInfo tables against PyTorch: bincount, histc, histogram (counts are not
differentiable in ember; PyTorch records them but its backward raises)."""
import numpy as np
import pytest

import ember
from opinfo import OpInfo, S, E, make_tests, F16, F32, F64
from oracle import NC, check, check_error, randn

IDX = np.array([1, 3, 1, 0, 7, 3], np.int64)
W = randn(6)
X = randn(50)
X2 = randn(6, 7)
CONST = np.full(5, 1.0, np.float32)
NANX = np.array([1., np.nan, 2., 0.5, np.inf, -np.inf], np.float32)
EDGE = np.array([0., 0.25, 0.5, 0.75, 1.0, 1.0, 0.1, 0.3], np.float32)   # values on bin edges
EDGES = np.array([-2., -0.5, 0., 0.3, 2.], np.float32)


def _hist(L, a, *args, **kw):
    return tuple(L.histogram(a, *args, **kw))


OPS = [
    OpInfo("bincount", [S(IDX), S(IDX, minlength=10), S(IDX, W), S(IDX.astype(np.int32), W),
                        S(IDX.astype(np.uint8)), S(IDX, (W * 3).astype(np.int64)),
                        S(np.zeros(0, np.int64)), S(np.zeros(0, np.int64), minlength=3),
                        S(np.zeros(0, np.int64), np.zeros(0, np.float32))],
           grad=False,
           errors=[E(np.array([1, -3, 1])), E(W), E(IDX.reshape(2, 3)),
                   E(np.array([True, False])), E(IDX, minlength=-1), E(IDX, W[:4]),
                   E(np.array(1))]),
    OpInfo("Tensor.bincount", [S(IDX, W, 9)], grad=False),
    OpInfo("bincount_f16_weights", [S(IDX, W.astype(np.float16))], grad=False,
           fn=lambda L, i, w: L.bincount(i, w)),
    OpInfo("histc", [S(X), S(X, bins=4), S(X, bins=5, min=-1, max=1), S(CONST, bins=4),
                     S(NANX, bins=4, min=0, max=3), S(X2, 6), S(np.zeros(0, np.float32), 4),
                     S(NC(X2), 3), S(EDGE, 4, 0, 1), S(np.array(0.5, np.float32), 3)],
           grad=False, dtypes=(F32, F64, F16),
           errors=[E(IDX, 4), E(X, 0), E(X, 4, 3, 1), E(X, 4, 0, np.inf), E(NANX, 4)]),
    OpInfo("Tensor.histc", [S(X, 7, -2, 2)], grad=False),
    OpInfo("histc_bf16", [S(X)], grad=False, fn=lambda L, a: L.histc(a.bfloat16(), 8)),
    OpInfo("histogram", [S(X, 4), S(X, 4, range=(0, 3)), S(X, 4, density=True),
                         S(X, 9, range=(-1., 2.), density=True), S(CONST, 4),
                         S(np.zeros(0, np.float32), 4), S(X, EDGES), S(X, EDGES, density=True),
                         S(NANX, 3, range=(0, 3)), S(X2, 5), S(NC(X2), 5), S(EDGE, 4),
                         S(EDGE, 37), S(X, 1)],
           grad=False, fn=_hist,
           errors=[E(IDX, 4), E(X.astype(np.float16), 4), E(X, 0), E(X, 3, range=(3., 1.)),
                   E(X, EDGES.reshape(1, 5)), E(X, EDGES.astype(np.float64)), E(NANX, 4)]),
    OpInfo("histogram_weight", [S(X, W.repeat(9)[:50]), S(X2, randn(6, 7, seed=3))], grad=False,
           fn=lambda L, a, w: tuple(L.histogram(a, 5, weight=w, density=True))),
    OpInfo("Tensor.histogram", [S(X, 6)], grad=False,
           fn=lambda L, a, b: (a.histogram(b).hist, a.histogram(b).bin_edges)),
    OpInfo("histogram_weight_errors", [], errors=[E(X, W), E(X, X.astype(np.float64))],
           fn=lambda L, a, w: L.histogram(a, 5, weight=w)),
]

test_forward, test_gradcheck, test_errors = make_tests(OPS)


def test_out_arguments():
    check(lambda L, a: L.histc(a, 5, out=L.empty(0)), X, grad=False)
    check(lambda L, a: tuple(L.histogram(a, 5, out=(L.empty(0), L.empty(0)))), X, grad=False)


def test_histogram_range_with_edge_tensor_is_a_type_error():
    check_error(lambda L, a, b: L.histogram(a, b, range=(0., 1.)), X, EDGES)


def test_counts_are_not_differentiable():
    x = ember.from_numpy(X).requires_grad_(True)
    assert not ember.histc(x, 4).requires_grad
    assert not ember.histogram(x, 4).hist.requires_grad


def test_bincount_shape_depends_on_data_in_fake_mode():
    from ember._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode()
    fake = mode.from_tensor(ember.from_numpy(IDX))
    with mode, pytest.raises(RuntimeError, match="depends on the data"):
        ember.bincount(fake)
    with mode:
        assert tuple(ember.histc(mode.from_tensor(ember.from_numpy(X)), 7).shape) == (7,)
