"""fill_/zero_, torch.<op>_ function forms, in-place view methods and the remaining
tensor functions, against PyTorch (OpInfo table + a few behaviour tests)."""
import numpy as np
import pytest

from opinfo import OpInfo, S, E, make_tests, F32, F64, I64
from oracle import NC, check, check_error, randn, torch
import ember

X = randn(4, 5)
V = np.array([1.0, 4.0, 9.0, 16.0, 25.0], dtype=np.float32)

OPS = [
    OpInfo("diff", [S(X), S(X, 2, 0), S(V, 1, -1, np.array([0.0], np.float32)), S(NC(X)),
                    S(randn(0, 3), 1, 0)], dtypes=(F32, F64, I64),
           errors=[E(np.array(3.0)), E(X, -1)]),
    OpInfo("ravel", [S(X), S(NC(X)), S(np.array(2.0))], dtypes=(F32, I64)),
    OpInfo("Tensor.ravel", [S(NC(X))]),
    OpInfo("isin", [S(np.array([1, 2, 3, 4]), np.array([2, 4])),
                    S(np.array([[1, 5], [2, 2]]), np.array([2, 9]), invert=True)],
           dtypes=(I64,), grad=False),
    OpInfo("cov", [S(X), S(V), S(X, correction=0)], errors=[E(randn(2, 2, 2))]),
    OpInfo("corrcoef", [S(X)]),
    OpInfo("trapezoid", [S(X), S(X, dx=0.5), S(X, dim=0), S(V, V)]),
    OpInfo("trapz", [S(X)]),
    OpInfo("cumulative_trapezoid", [S(X), S(X, dx=2.0, dim=0)]),
    OpInfo("gradient", [S(V), S(X, spacing=2.0), S(X, dim=1, edge_order=2)],
           errors=[E(np.array([1.0]))]),
    OpInfo("renorm", [S(X, 2, 0, 1.0), S(X, 1, 1, 0.5)]),
    OpInfo("frexp", [S(V * 3 - 7)], grad=False),
    OpInfo("fill", [S(X, 1.5)], fn=lambda L, x, v: (x * 1).fill_(v)),
    OpInfo("zero_", [S(X)], fn=lambda L, x: (x * 1).zero_()),
    OpInfo("exp_", [S(X)], fn=lambda L, x: L.exp_(x * 1)),
    OpInfo("sigmoid_", [S(X)], fn=lambda L, x: L.sigmoid_(x * 1)),
    OpInfo("t_", [S(X)], fn=lambda L, x: (x * 1).t_() * 2),
    OpInfo("squeeze_", [S(randn(3, 1, 2))], fn=lambda L, x: (x * 1).squeeze_(1) * 2),
    OpInfo("unsqueeze_", [S(X)], fn=lambda L, x: (x * 1).unsqueeze_(0) * 2),
    OpInfo("transpose_", [S(X)], fn=lambda L, x: (x * 1).transpose_(0, 1) * 2),
    OpInfo("fill_diagonal_", [S(randn(3, 3), 2.0), S(randn(5, 2), 1.0, True)],
           fn=lambda L, x, v, wrap=False: (x * 1).fill_diagonal_(v, wrap)),
    OpInfo("outer", [S(V, V[:3])], fn=lambda L, a, b: a.outer(b)),
]
test_forward, test_gradcheck, test_errors = make_tests(OPS)


@pytest.mark.parametrize("name", ["bartlett_window", "blackman_window", "hamming_window",
                                  "hann_window", "kaiser_window"])
@pytest.mark.parametrize("n,periodic", [(0, True), (1, True), (7, True), (8, False)])
def test_windows(name, n, periodic):
    e = getattr(ember, name)(n, periodic, dtype=ember.float64)
    t = getattr(torch, name)(n, periodic, dtype=torch.float64)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-12)


def test_unravel_index_matches_torch():
    for idx, shape in [([5, 7, 0], (2, 4)), (11, (3, 4)), ([[1, 2]], (3,)),
                       ([12, -1, -13], (3, 4))]:
        e = ember.unravel_index(ember.tensor(idx), shape)
        t = torch.unravel_index(torch.tensor(idx), shape)
        assert [x.tolist() for x in e] == [x.tolist() for x in t]
    check_error(lambda L: L.unravel_index(L.tensor([1.5]), (3, 4)))


def test_fill_with_tensor_value_and_errors():
    check(lambda L, x, v: (x * 1).fill_(v), X, np.array(2.0, np.float32))
    check_error(lambda L, x: (x * 1).fill_(L.ones(2)), X)
    with pytest.raises(RuntimeError):
        ember.ones(2, requires_grad=True).fill_(1.0)


def test_inplace_function_forms_exist_for_tensor_methods():
    for name in ("abs_", "exp_", "relu_", "sigmoid_", "tanh_", "sqrt_", "zero_", "fill_"):
        if hasattr(torch, name):
            assert hasattr(ember, name), name


def test_empty_strided_frombuffer_typename_range():
    t = ember.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and tuple(t.shape) == (2, 3)
    b = ember.frombuffer(bytearray(np.arange(4, dtype=np.int32).tobytes()), dtype=ember.int32)
    assert b.tolist() == [0, 1, 2, 3]
    assert ember.typename(ember.ones(1)) == torch.typename(torch.ones(1))
    with pytest.warns(UserWarning):
        r = ember.range(1, 4)
    assert r.tolist() == [1.0, 2.0, 3.0, 4.0]
