"""ember.audio.compliance.kaldi against torchaudio.compliance.kaldi."""
import math

import numpy as np
import pytest
import torch

import ember
from ember.audio.compliance import kaldi


def _wave(n=8000, channels=2):
    rng = np.random.default_rng(0)
    t = np.arange(n) / 16000
    x = [0.3 * np.sin(2 * math.pi * (200 + 150 * c) * t) + 0.02 * rng.standard_normal(n)
         for c in range(channels)]
    return np.stack(x).astype(np.float32)


CASES = [("fbank", {}), ("fbank", dict(num_mel_bins=40, use_energy=True, window_type="hamming",
                                       snip_edges=False)),
         ("fbank", dict(use_energy=True, htk_compat=True, subtract_mean=True,
                        use_log_fbank=False, use_power=False, channel=1)),
         ("fbank", dict(vtln_warp=1.1, low_freq=40, high_freq=-200, window_type="blackman")),
         ("mfcc", {}), ("mfcc", dict(use_energy=True, num_ceps=20, num_mel_bins=30,
                                     raw_energy=False, window_type="hanning")),
         ("mfcc", dict(htk_compat=True, cepstral_lifter=0.0, frame_shift=5.0,
                       round_to_power_of_two=False, frame_length=20.0)),
         ("spectrogram", {}), ("spectrogram", dict(window_type="rectangular", energy_floor=0.0,
                                                   snip_edges=False, subtract_mean=True))]


@pytest.mark.parametrize("fn,kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
def test_matches_torchaudio(ta, fn, kw):
    import torchaudio.compliance.kaldi as tk
    x = _wave()
    t = getattr(tk, fn)(torch.from_numpy(x), **kw)
    e = getattr(kaldi, fn)(ember.tensor(x), **kw)
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=2e-3, rtol=1e-4)


def test_mel_banks_and_fbank_gradient(ta):
    import torchaudio.compliance.kaldi as tk
    eb, ec = kaldi.get_mel_banks(30, 512, 16000.0, 20.0, 0.0, 100.0, -500.0, 0.9)
    tb, tc = tk.get_mel_banks(30, 512, 16000.0, 20.0, 0.0, 100.0, -500.0, 0.9)
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), atol=1e-5)
    np.testing.assert_allclose(ec.numpy(), tc.numpy(), rtol=1e-5)
    x = _wave(4000, 1).astype(np.float64)
    xt = torch.from_numpy(x).requires_grad_()
    xe = ember.tensor(x, requires_grad=True)
    tk.fbank(xt).sum().backward()
    kaldi.fbank(xe).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-4)
