"""batch_norm's fused training backward (native_batch_norm_backward) against PyTorch:
layouts, missing affine parameters, partial needs, half precision, double backward."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5), (4, 3, 5, 6), (2, 3, 2, 3, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_train_grads_match_torch(shape, affine):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 3 + 5).astype(np.float32)
    ga = rng.standard_normal(shape).astype(np.float32)
    wa, ba = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).requires_grad_()
        w = L.from_numpy(wa.copy()).requires_grad_() if affine else None
        b = L.from_numpy(ba.copy()).requires_grad_() if affine else None
        rm, rv = L.zeros(3), L.ones(3)
        y = L.nn.functional.batch_norm(x, rm, rv, w, b, training=True)
        y.backward(L.from_numpy(ga))
        res.append([y.detach().numpy(), x.grad.numpy(), rm.numpy(), rv.numpy()]
                   + ([w.grad.numpy(), b.grad.numpy()] if affine else []))
    for m, r in zip(*res):
        np.testing.assert_allclose(m, r, rtol=1e-4, atol=1e-4)


def test_batch_norm_only_weight_needs_grad_and_half():
    x = ember.randn(4, 3, 5)
    w = ember.ones(3, requires_grad=True)
    ember.nn.functional.batch_norm(x, None, None, w, None, training=True).pow(2).sum().backward()
    assert w.grad.shape == (3,) and x.grad is None
    a = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(np.float16)
    res = []
    for L in (ember, torch):
        xh = L.from_numpy(a.copy()).requires_grad_()
        L.nn.functional.batch_norm(xh, None, None, training=True).float().pow(2).sum().backward()
        res.append((xh.grad.dtype, xh.grad.float().numpy()))
    assert str(res[0][0]) == str(res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-2, atol=1e-2)


def test_batch_norm_train_double_backward():
    x = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(2, dtype=ember.float64, requires_grad=True)

    def f(a, b):
        return ember.nn.functional.batch_norm(a, None, None, b, None, training=True) ** 2
    assert ember.autograd.gradcheck(f, [x, w])
    assert ember.autograd.gradgradcheck(f, [x, w])


@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((3, 4, 5), (5,)), ((3, 4, 5), (4, 5)),
                                      ((2, 3, 4, 5), (3, 4, 5))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_grads_match_torch(shape, ns, affine):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    ga = rng.standard_normal(shape).astype(np.float32)
    wa, ba = rng.standard_normal(ns).astype(np.float32), rng.standard_normal(ns).astype(np.float32)
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).requires_grad_()
        w = L.from_numpy(wa.copy()).requires_grad_() if affine else None
        b = L.from_numpy(ba.copy()).requires_grad_() if affine else None
        y = L.nn.functional.layer_norm(x, ns, w, b)
        y.backward(L.from_numpy(ga))
        res.append([y.detach().numpy(), x.grad.numpy()]
                   + ([w.grad.numpy(), b.grad.numpy()] if affine else []))
    for m, r in zip(*res):
        np.testing.assert_allclose(m, r, rtol=1e-4, atol=1e-4)


def test_layer_norm_transposed_input_half_and_double_backward():
    a = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).t().requires_grad_()         # column-major (5, 6)
        L.nn.functional.layer_norm(x, (6,)).pow(3).sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-4, atol=1e-4)
    h = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float16)
    res = []
    for L in (ember, torch):
        x = L.from_numpy(h.copy()).requires_grad_()
        L.nn.functional.layer_norm(x, (8,)).float().pow(2).sum().backward()
        res.append((str(x.grad.dtype), x.grad.float().numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-2, atol=1e-2)
    x = ember.randn(2, 3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)

    def f(a, b):
        return ember.nn.functional.layer_norm(a, (3, 4), b) ** 2
    assert ember.autograd.gradcheck(f, [x, w])
    assert ember.autograd.gradgradcheck(f, [x, w])
