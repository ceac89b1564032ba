"""ember.audio.functional against torchaudio.functional (values within float tolerance)."""
import math

import numpy as np
import pytest
import torch

import ember
import ember.audio.functional as EF


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(e, t, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(_np(e), t.detach().numpy(), rtol=rtol, atol=atol)


def _wave(shape=(2, 4000), seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(shape[-1]) / 8000.0
    x = 0.5 * np.sin(2 * math.pi * 440 * t) + 0.1 * rng.standard_normal(shape)
    return x.astype(np.float32)


@pytest.mark.parametrize("kw", [
    dict(n_fft=256, hop_length=64, win_length=256, power=2.0, normalized=False),
    dict(n_fft=200, hop_length=50, win_length=160, power=1.0, normalized=True),
    dict(n_fft=128, hop_length=32, win_length=128, power=None, normalized="frame_length",
         center=False),
    dict(n_fft=128, hop_length=40, win_length=100, power=2.0, normalized=False, pad=7,
         pad_mode="constant"),
])
def test_spectrogram(ta, kw):
    kw = dict(kw)
    pad = kw.pop("pad", 0)
    x = _wave((2, 3, 1000))
    t = ta.functional.spectrogram(torch.from_numpy(x), pad, torch.hann_window(kw["win_length"]),
                                  **kw)
    e = EF.spectrogram(ember.tensor(x), pad, ember.hann_window(kw["win_length"]), **kw)
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    _close(e, t, atol=1e-3)


def test_inverse_spectrogram_round_trip(ta):
    x = _wave((2, 800))
    w = torch.hann_window(128)
    spec = ta.functional.spectrogram(torch.from_numpy(x), 0, w, 128, 32, 128, None, False)
    t = ta.functional.inverse_spectrogram(spec, 800, 0, w, 128, 32, 128, False)
    e = EF.inverse_spectrogram(ember.tensor(spec.numpy()), 800, 0, ember.hann_window(128),
                               128, 32, 128, False)
    _close(e, t, atol=1e-5)
    np.testing.assert_allclose(_np(e), x, atol=1e-5)


@pytest.mark.parametrize("norm,scale", [(None, "htk"), ("slaney", "slaney"), (None, "slaney")])
def test_melscale_fbanks(ta, norm, scale):
    t = ta.functional.melscale_fbanks(201, 0.0, 8000.0, 40, 16000, norm, scale)
    e = EF.melscale_fbanks(201, 0.0, 8000.0, 40, 16000, norm, scale)
    _close(e, t, atol=1e-5, rtol=1e-3)     # float32 linspace/exp rounding
    _close(EF.linear_fbanks(129, 10.0, 3000.0, 12, 8000),
           ta.functional.linear_fbanks(129, 10.0, 3000.0, 12, 8000), atol=1e-6)


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_create_dct(ta, norm):
    _close(EF.create_dct(13, 40, norm), ta.functional.create_dct(13, 40, norm), atol=1e-6)


@pytest.mark.parametrize("top_db", [None, 40.0])
def test_amplitude_to_db(ta, top_db):
    x = np.abs(_wave((2, 3, 20, 30))) ** 2
    t = ta.functional.amplitude_to_DB(torch.from_numpy(x), 10.0, 1e-10, 0.0, top_db)
    e = EF.amplitude_to_DB(ember.tensor(x), 10.0, 1e-10, 0.0, top_db)
    _close(e, t, atol=1e-4)
    _close(EF.DB_to_amplitude(e, 1.0, 0.5), ta.functional.DB_to_amplitude(t, 1.0, 0.5))


def test_mu_law(ta):
    x = np.clip(_wave((1, 500)), -1, 1)
    t = ta.functional.mu_law_encoding(torch.from_numpy(x), 256)
    e = EF.mu_law_encoding(ember.tensor(x), 256)
    assert e.dtype == ember.int64
    np.testing.assert_array_equal(_np(e), t.numpy())
    _close(EF.mu_law_decoding(e, 256), ta.functional.mu_law_decoding(t, 256), atol=1e-6)


@pytest.mark.parametrize("rate", [1.3, 0.8])
def test_phase_vocoder(ta, rate):
    x = _wave((2, 2000))
    spec = torch.stft(torch.from_numpy(x), 256, 64, window=torch.hann_window(256),
                      return_complex=True)
    adv = torch.linspace(0, math.pi * 64, 129)[..., None]
    t = ta.functional.phase_vocoder(spec, rate, adv)
    e = EF.phase_vocoder(ember.tensor(spec.numpy()), rate, ember.tensor(adv.numpy()))
    assert tuple(e.shape) == tuple(t.shape)
    _close(e, t, atol=2e-3, rtol=1e-3)


@pytest.mark.parametrize("mode", ["replicate", "constant"])
def test_compute_deltas(ta, mode):
    x = _wave((2, 13, 50))
    _close(EF.compute_deltas(ember.tensor(x), 7, mode),
           ta.functional.compute_deltas(torch.from_numpy(x), 7, mode), atol=1e-5)


@pytest.mark.parametrize("orig,new,method", [(16000, 8000, "sinc_interp_hann"),
                                             (8000, 44100, "sinc_interp_hann"),
                                             (44100, 16000, "sinc_interp_kaiser")])
def test_resample(ta, orig, new, method):
    x = _wave((2, 1000))
    t = ta.functional.resample(torch.from_numpy(x), orig, new, resampling_method=method)
    e = EF.resample(ember.tensor(x), orig, new, resampling_method=method)
    assert tuple(e.shape) == tuple(t.shape)
    _close(e, t, atol=1e-5)


def test_speed_and_pitch_shift(ta):
    x = _wave((1, 4000))
    t, _ = ta.functional.speed(torch.from_numpy(x), 8000, 1.25)
    e, _ = EF.speed(ember.tensor(x), 8000, 1.25)
    _close(e, t, atol=1e-5)
    t = ta.functional.pitch_shift(torch.from_numpy(x), 8000, -12, n_fft=256)
    e = EF.pitch_shift(ember.tensor(x), 8000, -12, n_fft=256)
    _close(e, t, atol=2e-3, rtol=1e-3)


BIQUADS = [("lowpass_biquad", (8000, 1000.0)), ("highpass_biquad", (8000, 500.0, 0.5)),
           ("allpass_biquad", (8000, 700.0)), ("bandpass_biquad", (8000, 700.0, 2.0, True)),
           ("bandreject_biquad", (8000, 700.0)), ("band_biquad", (8000, 600.0, 1.0, True)),
           ("equalizer_biquad", (8000, 1000.0, 6.0)), ("bass_biquad", (8000, 4.0)),
           ("treble_biquad", (8000, -3.0, 2000.0))]


@pytest.mark.parametrize("name,args", BIQUADS, ids=[b[0] for b in BIQUADS])
def test_biquads(ta, name, args):
    x = _wave((2, 1500)) * 0.5
    t = getattr(ta.functional, name)(torch.from_numpy(x), *args)
    e = getattr(EF, name)(ember.tensor(x), *args)
    _close(e, t, atol=1e-4)


def test_lfilter_multi_filter_and_grad(ta):
    x = _wave((3, 2, 600)) * 0.5
    a = np.array([[1.0, -0.5, 0.1], [1.0, 0.2, 0.05]], np.float32)
    b = np.array([[0.4, 0.2, 0.1], [0.3, -0.1, 0.2]], np.float32)
    t = ta.functional.lfilter(torch.from_numpy(x), torch.from_numpy(a), torch.from_numpy(b),
                              clamp=False)
    xe = ember.tensor(x, requires_grad=True)
    e = EF.lfilter(xe, ember.tensor(a), ember.tensor(b), clamp=False)
    _close(e, t, atol=1e-5)
    # torch reference for the gradient: the filter as a causal convolution with its impulse
    # response (torchaudio's own lfilter fallback has no backward), differentiated by torch
    n = x.shape[-1]
    delta = torch.zeros(2, n)
    delta[:, 0] = 1
    h = ta.functional.lfilter(delta, torch.from_numpy(a), torch.from_numpy(b), clamp=False)
    xt = torch.from_numpy(x).requires_grad_()
    ref = torch.nn.functional.conv1d(torch.nn.functional.pad(xt, (n - 1, 0)),
                                     h.flip(-1)[:, None], groups=2)
    _close(e, ref, atol=1e-4)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    ref.backward(torch.from_numpy(g))
    e.backward(ember.tensor(g))
    _close(xe.grad, xt.grad, atol=1e-4)
    t2 = ta.functional.lfilter(torch.from_numpy(x[0, 0]), torch.from_numpy(a),
                               torch.from_numpy(b), batching=False)
    e2 = EF.lfilter(ember.tensor(x[0, 0]), ember.tensor(a), ember.tensor(b), batching=False)
    assert tuple(e2.shape) == tuple(t2.shape) == (2, 600)
    _close(e2, t2, atol=1e-5)
    with pytest.raises(ValueError):
        EF.lfilter(ember.tensor(x), ember.tensor(a[0]), ember.tensor(b))


def test_filtfilt_gain_dcshift_contrast_emphasis(ta):
    x = _wave((2, 700)) * 0.5
    a, b = torch.tensor([1.0, -0.6]), torch.tensor([0.2, 0.2])
    _close(EF.filtfilt(ember.tensor(x), ember.tensor(a.numpy()), ember.tensor(b.numpy())),
           ta.functional.filtfilt(torch.from_numpy(x), a, b), atol=1e-5)
    tx, ex = torch.from_numpy(x), ember.tensor(x)
    _close(EF.gain(ex, 3.0), ta.functional.gain(tx, 3.0))
    _close(EF.dcshift(ex, 0.6, 0.05), ta.functional.dcshift(tx.clone(), 0.6, 0.05))
    _close(EF.dcshift(ex, -0.3), ta.functional.dcshift(tx.clone(), -0.3))
    _close(EF.contrast(ex, 50.0), ta.functional.contrast(tx, 50.0))
    _close(EF.preemphasis(ex), ta.functional.preemphasis(tx))
    _close(EF.deemphasis(ex), ta.functional.deemphasis(tx), atol=1e-5)


def test_masks_shapes_and_statistics():
    ember.manual_seed(0)
    spec = ember.ones(4, 2, 30, 40)
    out = EF.mask_along_axis_iid(spec, 10, 0.0, 3)
    masked = (out == 0).float().mean(dim=2)             # whole time columns are masked
    assert bool(((masked == 0) | (masked == 1)).all())
    widths = (out[:, :, 0, :] == 0).sum(-1)
    assert int(widths.max()) < 10 and int(widths.sum()) > 0
    out = EF.mask_along_axis(spec, 8, -1.0, 2)
    rows = (out == -1.0).all(dim=3)[0, 0]
    assert bool((rows == (out == -1.0).all(dim=3)).all())  # same rows for every example
    assert int(rows.sum()) < 8
    with pytest.raises(ValueError):
        EF.mask_along_axis(spec, 8, 0.0, 1)


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_convolve_fftconvolve(ta, mode):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 50)).astype(np.float32)
    y = rng.standard_normal((1, 3, 11)).astype(np.float32)
    for name in ("convolve", "fftconvolve"):
        t = getattr(ta.functional, name)(torch.from_numpy(x), torch.from_numpy(y), mode)
        e = getattr(EF, name)(ember.tensor(x), ember.tensor(y), mode)
        assert tuple(e.shape) == tuple(t.shape)
        _close(e, t, atol=1e-4)
    with pytest.raises(ValueError, match="mode"):
        EF.convolve(ember.tensor(x), ember.tensor(y), "middle")


def test_add_noise_and_edit_distance(ta):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((2, 400)).astype(np.float32)
    n = rng.standard_normal((2, 400)).astype(np.float32)
    snr, lengths = np.array([10.0, 3.0], np.float32), np.array([400, 250])
    t = ta.functional.add_noise(torch.from_numpy(w), torch.from_numpy(n), torch.from_numpy(snr),
                                torch.from_numpy(lengths))
    e = EF.add_noise(ember.tensor(w), ember.tensor(n), ember.tensor(snr), ember.tensor(lengths))
    _close(e, t, atol=1e-5)
    for a, b in [("kitten", "sitting"), (["a", "b", "c"], ["a", "c"]), ("", "abc")]:
        assert EF.edit_distance(a, b) == ta.functional.edit_distance(a, b)


def test_deemph_riaa_overdrive(ta):
    x = _wave((2, 3000)) * 0.5
    tx, ex = torch.from_numpy(x), ember.tensor(x)
    for sr in (44100, 48000):
        _close(EF.deemph_biquad(ex, sr), ta.functional.deemph_biquad(tx, sr), atol=1e-5)
    for sr in (44100, 96000):
        _close(EF.riaa_biquad(ex, sr), ta.functional.riaa_biquad(tx, sr), atol=1e-4)
    _close(EF.overdrive(ex, 15, 30), ta.functional.overdrive(tx, 15, 30), atol=1e-5)
    with pytest.raises(ValueError, match="Sample rate"):
        EF.riaa_biquad(ex, 8000)


@pytest.mark.parametrize("kw", [dict(), dict(cmn_window=50, min_cmn_window=10),
                                dict(cmn_window=40, center=True, norm_vars=True),
                                dict(cmn_window=30, min_cmn_window=5, norm_vars=True)])
def test_sliding_window_cmn(ta, kw):
    x = _wave((2, 120, 13)).astype(np.float64)
    _close(EF.sliding_window_cmn(ember.tensor(x), **kw),
           ta.functional.sliding_window_cmn(torch.from_numpy(x), **kw), atol=1e-8)
    _close(EF.sliding_window_cmn(ember.tensor(x[0]), **kw),
           ta.functional.sliding_window_cmn(torch.from_numpy(x[0]), **kw), atol=1e-8)


def test_loudness(ta):
    x = _wave((2, 2, 8000)) * 0.3
    t = ta.functional.loudness(torch.from_numpy(x), 8000)
    e = EF.loudness(ember.tensor(x), 8000)
    assert tuple(e.shape) == tuple(t.shape)
    _close(e, t, atol=1e-3)
