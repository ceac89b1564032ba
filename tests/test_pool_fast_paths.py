"""adaptive_avg_pool's evenly-dividing fast path (a reshape and a mean forward, an expand
backward) against PyTorch, with double backward and half precision."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape,size", [((2, 3, 8, 6), (1, 1)), ((2, 3, 8, 6), (4, 3)),
                                        ((3, 8, 6), (2, 2)), ((2, 2, 4, 6, 8), (2, 3, 1)),
                                        ((2, 3, 8, 6), (8, 6))])
def test_adaptive_avg_even_windows_match_torch(shape, size):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    g = np.random.default_rng(1).standard_normal(shape[:-len(size)] + size).astype(np.float32)
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).requires_grad_()
        fn = getattr(L.nn.functional, f"adaptive_avg_pool{len(size)}d")
        y = fn(x, size)
        y.backward(L.from_numpy(g))
        res.append((y.detach().numpy(), x.grad.numpy()))
    for m, r in zip(*res):
        assert m.shape == r.shape
        np.testing.assert_allclose(m, r, rtol=1e-5, atol=1e-6)


def test_adaptive_avg_even_windows_gradgrad_and_half():
    x = ember.randn(1, 2, 4, 4, dtype=ember.float64, requires_grad=True)
    fn = ember.nn.functional.adaptive_avg_pool2d
    assert ember.autograd.gradcheck(lambda a: fn(a, (2, 1)) ** 2, [x])
    assert ember.autograd.gradgradcheck(lambda a: fn(a, (2, 1)) ** 2, [x])
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float16)
    mine = fn(ember.from_numpy(a), 2)
    ref = torch.nn.functional.adaptive_avg_pool2d(torch.from_numpy(a), 2)
    assert mine.dtype == ember.float16
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("shape,k,kw", [((2, 3, 8, 6), 2, {}), ((2, 3, 9, 7), 2, {}),
                                        ((3, 9, 7), (3, 2), {}),
                                        ((2, 3, 8, 6), 2, {"divisor_override": 3}),
                                        ((2, 2, 4, 6, 5), 2, {})])
def test_avg_pool_tiling_windows_match_torch(shape, k, kw):
    """avg_pool with stride == kernel and no padding (the windows tile the input, leftover
    rows/cols get no gradient): the reshape-and-sum path."""
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    n = 3 if len(shape) == 5 else 2
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy()).requires_grad_()
        y = getattr(L.nn.functional, f"avg_pool{n}d")(x, k, **kw)
        y.backward(L.from_numpy(np.random.default_rng(1).standard_normal(tuple(y.shape))
                                .astype(np.float32)))
        res.append((y.detach().numpy(), x.grad.numpy()))
    for m, r in zip(*res):
        assert m.shape == r.shape
        np.testing.assert_allclose(m, r, rtol=1e-5, atol=1e-6)
    x = ember.randn(1, 2, 5, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(
        lambda t: ember.nn.functional.avg_pool2d(t, 2) ** 2, [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("args", [(2, 2, 0), (3, 2, 1), (3, 1, 1)])
def test_max_pool_scan_indices_match_torch(dtype, args):
    """max_pool's per-offset scan (kernels of up to 16 elements): values and indices
    with ties, -inf, NaNs (a window's last NaN wins) and integers, as PyTorch's."""
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 3, (2, 3, 7, 8)).astype(dtype)       # many ties
    if dtype != np.int64:
        a[0, 0, 1, 1] = a[0, 0, 2, 2] = a[1, 2, 4, 5] = np.nan
        a[0, 1, :2, :2] = -np.inf
    k, s, p = args
    res = []
    for L in (ember, torch):
        x = L.from_numpy(a.copy())
        v, i = L.nn.functional.max_pool2d(x, k, s, p, return_indices=True)
        res.append((v.numpy(), i.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
