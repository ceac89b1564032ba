"""ember.ops._lowp.cast: the C float32 <-> bfloat16/float16 casts give NumPy's (ml_dtypes')
and PyTorch's bits, subnormals, infinities and NaN included, and fall back to NumPy."""
import warnings

import ml_dtypes
import numpy as np
import pytest

from ember.ops import _lowp

torch = pytest.importorskip("torch")


def _special(n=20000):
    rng = np.random.default_rng(0)
    scale = rng.choice(np.array([1e-44, 1e-40, 1e-38, 1.0, 1e20, 3e38], np.float32), n)
    x = (rng.standard_normal(n).astype(np.float32) * scale).astype(np.float32)
    x[:12] = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3.4e38, 65504.0,
              65520.0, 1.00390625]      # ties, the float16 max and its rounding edge
    return x


@pytest.mark.parametrize("dt,tdt", [(ml_dtypes.bfloat16, "bfloat16"), (np.float16, "float16")])
def test_same_bits_as_numpy_and_torch(dt, tdt):
    x = _special()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = x.astype(dt)
    got = _lowp.cast(x, dt)
    t = torch.from_numpy(x).to(getattr(torch, tdt)).float().numpy()
    nan = np.isnan(x)
    assert got.dtype == np.dtype(dt) and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], ref.view(np.uint16)[~nan])
    np.testing.assert_array_equal(got.astype(np.float32)[~nan], t[~nan])
    assert np.isnan(got.astype(np.float32)[nan]).all()
    back = _lowp.cast(got, np.float32)
    np.testing.assert_array_equal(back, ref.astype(np.float32))


def test_layout_and_copy_semantics():
    x = _special().reshape(100, 200)
    assert _lowp.cast(x, np.float32, copy=False) is x
    f = np.asfortranarray(x)
    assert _lowp.cast(f, ml_dtypes.bfloat16).flags.f_contiguous     # NumPy's layout kept
    small = x[:2, :3]
    np.testing.assert_array_equal(_lowp.cast(small, np.float16).view(np.uint16),
                                  small.astype(np.float16).view(np.uint16))


def test_fallback_without_c(monkeypatch):
    x = _special()
    monkeypatch.setattr(_lowp, "_FUNCS", {n: None for n in _lowp._NAMES.values()})
    np.testing.assert_array_equal(_lowp.cast(x, ml_dtypes.bfloat16).view(np.uint16),
                                  x.astype(ml_dtypes.bfloat16).view(np.uint16))
