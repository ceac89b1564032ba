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


@pytest.mark.parametrize("tdt", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape,transpose", [((80, 128), False), ((80, 128), True),
                                             ((3, 5), False)])
def test_relu_and_its_backward_on_half_bits(tdt, shape, transpose):
    """relu and threshold_backward of bf16/fp16 without a float32 copy (the C path for large
    contiguous arrays): PyTorch's values and bits, -0.0, infinities and NaN included."""
    import ember
    x = _special(int(np.prod(shape))).reshape(shape)
    x[0, :4] = [-0.0, np.nan, -np.inf, -1e-30]
    g = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tx = torch.from_numpy(x).to(getattr(torch, tdt))
        tg = torch.from_numpy(g).to(getattr(torch, tdt))
    ex = ember.from_numpy(tx.float().numpy()).to(getattr(ember, tdt))
    eg = ember.from_numpy(tg.float().numpy()).to(getattr(ember, tdt))
    if transpose:
        tx, tg, ex, eg = tx.t(), tg.t(), ex.t(), eg.t()
    tx.requires_grad_()
    ex.requires_grad_()
    ty, ey = torch.relu(tx), ember.relu(ex)
    ty.backward(tg)
    ey.backward(eg)
    for e, t in ((ey, ty), (ex.grad, tx.grad)):
        assert e.dtype == getattr(ember, tdt) and tuple(e.stride()) == tuple(t.stride())
        ev, tv = e.detach().float().numpy(), t.detach().float().numpy()
        np.testing.assert_array_equal(ev, tv)
        np.testing.assert_array_equal(np.signbit(ev), np.signbit(tv))
