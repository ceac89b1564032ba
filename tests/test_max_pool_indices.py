"""max_pool's values and indices (flat indices looked up in a per-position table) against
PyTorch where the argmax is delicate: ties (the first wins), NaNs (a NaN replaces
anything, so a window's last NaN wins), -inf, padding, dilation, ceil_mode, and 1/3-d."""
import numpy as np
import pytest

from oracle import check, randn

torch = pytest.importorskip("torch")


def _tricky(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(np.float32)        # many ties
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, flat.size // 7, replace=False)] = np.nan
    flat[rng.choice(flat.size, flat.size // 9, replace=False)] = -np.inf
    return x


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, dilation=2, ceil_mode=True),
                                dict(kernel_size=(2, 3), stride=(1, 2))])
def test_ties_nan_inf_match_torch(kw):
    x = _tricky((2, 3, 9, 10))
    check(lambda L, x: L.nn.functional.max_pool2d(x, return_indices=True, **kw), x,
          grad=False)
    check(lambda L, x: L.nn.functional.max_pool2d(x, **kw), randn(2, 3, 9, 10))


def test_1d_3d():
    check(lambda L, x: L.nn.functional.max_pool1d(x, 3, 2, return_indices=True),
          _tricky((2, 3, 11), seed=1), grad=False)
    check(lambda L, x: L.nn.functional.max_pool3d(x, 2, padding=1, return_indices=True),
          _tricky((1, 2, 5, 4, 5), seed=2), grad=False)
    check(lambda L, x: L.nn.functional.max_pool3d(x, (2, 3, 2), stride=1), randn(1, 2, 5, 4, 5))
