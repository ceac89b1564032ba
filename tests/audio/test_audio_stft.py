"""ember.functional (stft/istft with torch's signature) against torch.stft/istft."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember.functional import istft, stft

CASES = [dict(n_fft=64), dict(n_fft=64, hop_length=10, win_length=50, window=True),
         dict(n_fft=64, center=False, normalized=True, window=True),
         dict(n_fft=64, onesided=False, pad_mode="constant"),
         dict(n_fft=31, hop_length=7, pad_mode="replicate", window=True)]


def _windows(kw):
    kw = dict(kw)
    if kw.pop("window", False):
        n = kw.get("win_length", kw["n_fft"])
        return kw, torch.hann_window(n), ember.hann_window(n)
    return kw, None, None


@pytest.mark.parametrize("kw", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_stft_matches_torch(kw, batched):
    x = np.random.default_rng(0).standard_normal((2, 500) if batched else 500)
    x = x.astype(np.float32)
    kw, tw, ew = _windows(kw)
    t = torch.stft(torch.from_numpy(x), window=tw, return_complex=True, **kw)
    with warnings.catch_warnings(record=True) as ews:
        warnings.simplefilter("always")
        e = stft(ember.tensor(x), window=ew, return_complex=True, **kw)
    # torch warns (once per process) when no window is given
    assert [str(w.message)[:26] for w in ews] == (["A window was not provided."]
                                                   if ew is None else [])
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4)
    with pytest.warns(UserWarning):
        r = stft(ember.tensor(x), window=ew, return_complex=False, **kw)
    assert tuple(r.shape) == tuple(t.shape) + (2,)


def test_stft_complex_input_and_errors():
    x = (np.random.default_rng(1).standard_normal((2, 300))
         + 1j * np.random.default_rng(2).standard_normal((2, 300))).astype(np.complex64)
    t = torch.stft(torch.from_numpy(x), 32, window=torch.hann_window(32), return_complex=True)
    e = stft(ember.tensor(x), 32, window=ember.hann_window(32))
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-4)
    real = ember.randn(100)
    with pytest.raises(RuntimeError, match="return_complex"):
        stft(real, 16)
    with pytest.raises(RuntimeError, match="win_length"):
        stft(real, 16, win_length=20, return_complex=True)
    with pytest.raises(RuntimeError, match="1D or 2D"):
        stft(ember.randn(2, 2, 100), 16, return_complex=True)


@pytest.mark.parametrize("kw", [dict(n_fft=64, hop_length=16, window=True),
                                dict(n_fft=64, hop_length=16, win_length=48, window=True,
                                     normalized=True),
                                dict(n_fft=64, hop_length=16, window=True, center=False),
                                dict(n_fft=64, hop_length=16, center=False)])
@pytest.mark.parametrize("length", [None, 400, 520])
def test_istft_matches_torch(kw, length):
    x = np.random.default_rng(3).standard_normal((2, 500)).astype(np.float32)
    kw, tw, ew = _windows(kw)
    spec = torch.stft(torch.from_numpy(x), window=tw, return_complex=True, **kw)
    try:
        t = torch.istft(spec, window=tw, length=length, **kw)
    except RuntimeError:          # center=False with a hann window: zero envelope at 0
        with pytest.raises(RuntimeError, match="overlap add min"):
            istft(ember.tensor(spec.numpy()), window=ew, length=length, **kw)
        return
    with warnings.catch_warnings(record=True) as ews:
        warnings.simplefilter("always")
        e = istft(ember.tensor(spec.numpy()), window=ew, length=length, **kw)
    assert tuple(e.shape) == tuple(t.shape)
    padded = length is not None and not kw.get("center", True) and length > 64 + 16 * (
        spec.shape[-1] - 1)
    assert any("padded with zeros" in str(w.message) for w in ews) == padded
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-5)


def test_istft_two_sided_and_nola_error():
    x = np.random.default_rng(4).standard_normal(300).astype(np.float32)
    spec = torch.stft(torch.from_numpy(x), 32, 8, window=torch.hann_window(32),
                      onesided=False, return_complex=True)
    t = torch.istft(spec, 32, 8, window=torch.hann_window(32), onesided=False)
    e = istft(ember.tensor(spec.numpy()), 32, 8, window=ember.hann_window(32), onesided=False)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-5)
    with pytest.raises(RuntimeError, match="NOLA|overlap"):
        istft(ember.tensor(spec.numpy()), 32, 8, window=ember.zeros(32), onesided=False)


def test_stft_istft_gradients_match_torch():
    x = np.random.default_rng(5).standard_normal((2, 256)).astype(np.float64)
    xt = torch.from_numpy(x).requires_grad_()
    xe = ember.tensor(x, requires_grad=True)
    wt, we = torch.hann_window(64, dtype=torch.float64), ember.hann_window(64,
                                                                         dtype=ember.float64)
    st = torch.stft(xt, 64, 16, window=wt, return_complex=True)
    se = stft(xe, 64, 16, window=we, return_complex=True)
    lt = (st.abs() ** 2).sum() + torch.istft(st * 0.5, 64, 16, window=wt).pow(3).sum()
    le = (se.abs() ** 2).sum() + istft(se * 0.5, 64, 16, window=we).pow(3).sum()
    lt.backward()
    le.backward()
    np.testing.assert_allclose(le.item(), lt.item(), rtol=1e-10)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-8, atol=1e-8)
