"""Fused backward paths against PyTorch: cross_entropy (softmax - onehot, scaled) over
reductions, class weights, ignore_index, K-dim inputs and double backward; embedding's
per-index row sums."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(6, 5), (4, 5, 3), (3, 5, 2, 2), (5,)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1, "all"])
def test_cross_entropy_grads_match_torch(shape, reduction, weighted, ignore):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    tshape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    tg = rng.integers(0, shape[-1] if len(shape) == 1 else shape[1], tshape)
    ign = -100
    if ignore == "all":
        ign = 2
        tg = np.full(tshape, 2)
    elif ignore == 1:
        ign = 1
    wa = rng.random(shape[0] if len(shape) == 1 else shape[1]).astype(np.float32) + 0.5
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).requires_grad_()
        w = L.from_numpy(wa) if weighted else None
        loss = L.nn.functional.cross_entropy(x, L.from_numpy(np.asarray(tg)), weight=w,
                                             reduction=reduction, ignore_index=ign)
        gl = np.random.default_rng(1).standard_normal(tuple(loss.shape)).astype(np.float32)
        loss.backward(L.from_numpy(gl))
        res.append((loss.detach().numpy(), x.grad.numpy()))
    for m, r in zip(*res):
        np.testing.assert_allclose(m, r, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_cross_entropy_double_backward():
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    t = ember.tensor([0, 2, 1, 2])
    w = ember.tensor([0.5, 1.0, 2.0], dtype=ember.float64)
    assert ember.autograd.gradcheck(lambda a: ember.nn.functional.cross_entropy(a, t, w), [x])
    assert ember.autograd.gradgradcheck(
        lambda a: ember.nn.functional.cross_entropy(a, t, w, ignore_index=1), [x])


@pytest.mark.parametrize("repeat", [1, 5, 40])
def test_embedding_backward_row_sums_match_torch(repeat):
    """embedding's backward sums gradient rows per index: the vectorized path (few
    repeats) and reduceat (an index repeated more than 16 times) against PyTorch."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 50, 200)
    ids[:repeat] = 7
    wa = rng.standard_normal((50, 6)).astype(np.float32)
    ga = rng.standard_normal((200, 6)).astype(np.float32)
    res = []
    for L in (ember, torch):
        w = L.from_numpy(wa.copy()).requires_grad_()
        L.nn.functional.embedding(L.from_numpy(ids), w, padding_idx=3).backward(L.from_numpy(ga))
        res.append(w.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-5)
