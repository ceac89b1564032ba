"""ember.audio.transforms against torchaudio.transforms: values, shapes, state_dict keys."""
import math

import numpy as np
import pytest
import torch

import ember
import ember.audio.transforms as ET

pytestmark = pytest.mark.filterwarnings("ignore:At least one mel filterbank")


def _wave(shape=(2, 4000), seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(shape[-1]) / 16000.0
    x = 0.5 * np.sin(2 * math.pi * 440 * t) + 0.05 * rng.standard_normal(shape)
    return x.astype(np.float32)


def _pair(ta, name, *args, **kw):
    ewf = kw.pop("window_fn", None)
    ekw, tkw = dict(kw), dict(kw)
    if ewf:
        ekw["window_fn"], tkw["window_fn"] = getattr(ember, ewf), getattr(torch, ewf)
    return getattr(ET, name)(*args, **ekw), getattr(ta.transforms, name)(*args, **tkw)


def _check(e_mod, t_mod, e_in, t_in, atol=1e-4, rtol=1e-4):
    e, t = e_mod(e_in), t_mod(t_in)
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)
    assert sorted(e_mod.state_dict()) == sorted(t_mod.state_dict())
    for k, v in t_mod.state_dict().items():
        np.testing.assert_allclose(e_mod.state_dict()[k].numpy(), v.numpy(), atol=1e-5,
                                   rtol=1e-3)


MODULES = [
    ("Spectrogram", (), dict(n_fft=256, hop_length=64)),
    ("Spectrogram", (), dict(n_fft=200, win_length=150, power=1.0, normalized=True,
                             window_fn="hamming_window")),
    ("MelSpectrogram", (), dict(sample_rate=16000, n_fft=512, n_mels=40)),
    ("MelSpectrogram", (), dict(sample_rate=16000, n_fft=400, n_mels=64, norm="slaney",
                                mel_scale="slaney", f_min=50.0, f_max=7000.0)),
    ("MFCC", (), dict(sample_rate=16000, n_mfcc=13, melkwargs=dict(n_fft=400, n_mels=40))),
    ("MFCC", (), dict(sample_rate=16000, n_mfcc=20, log_mels=True,
                      melkwargs=dict(n_fft=256, n_mels=32, hop_length=128))),
    ("LFCC", (), dict(sample_rate=16000, n_filter=64, n_lfcc=20)),
    ("SpectralCentroid", (16000,), dict(n_fft=256)),
    ("Resample", (16000, 8000), {}),
    ("Resample", (16000, 22050), dict(resampling_method="sinc_interp_kaiser")),
    ("Fade", (), dict(fade_in_len=500, fade_out_len=800, fade_shape="linear")),
    ("Fade", (), dict(fade_in_len=300, fade_out_len=300, fade_shape="logarithmic")),
    ("Fade", (), dict(fade_in_len=1000, fade_out_len=200, fade_shape="half_sine")),
    ("Fade", (), dict(fade_in_len=700, fade_out_len=900, fade_shape="exponential")),
    ("Fade", (), dict(fade_in_len=10, fade_out_len=4000, fade_shape="quarter_sine")),
    ("Vol", (2.0,), {}), ("Vol", (-6.0, "db"), {}), ("Vol", (0.3, "power"), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES, ids=[m[0] for m in MODULES])
def test_waveform_modules(ta, name, args, kw):
    x = _wave((2, 4000))
    e_mod, t_mod = _pair(ta, name, *args, **kw)
    atol = 5e-3 if name in ("MFCC", "LFCC") else 2e-4     # dB then DCT: float32 log noise
    _check(e_mod, t_mod, ember.tensor(x), torch.from_numpy(x), atol=atol, rtol=1e-3)


def test_amplitude_to_db_and_compute_deltas(ta):
    x = np.abs(_wave((2, 3, 20, 30))) + 1e-3
    for stype, top in [("power", None), ("magnitude", 30.0)]:
        _check(ET.AmplitudeToDB(stype, top), ta.transforms.AmplitudeToDB(stype, top),
               ember.tensor(x), torch.from_numpy(x))
    _check(ET.ComputeDeltas(7), ta.transforms.ComputeDeltas(7), ember.tensor(x),
           torch.from_numpy(x), atol=1e-5)


def test_mu_law_modules(ta):
    x = np.clip(_wave((1, 300)), -1, 1)
    enc_e, enc_t = ET.MuLawEncoding(128), ta.transforms.MuLawEncoding(128)
    np.testing.assert_array_equal(enc_e(ember.tensor(x)).numpy(),
                                  enc_t(torch.from_numpy(x)).numpy())
    codes = enc_t(torch.from_numpy(x))
    _check(ET.MuLawDecoding(128), ta.transforms.MuLawDecoding(128),
           ember.tensor(codes.numpy()), codes, atol=1e-6)


def test_time_stretch_and_inverse_spectrogram(ta):
    x = _wave((2, 3000))
    spec = torch.stft(torch.from_numpy(x), 400, 100, window=torch.hann_window(400),
                      return_complex=True)
    e_mod, t_mod = ET.TimeStretch(hop_length=100, n_freq=201), ta.transforms.TimeStretch(
        hop_length=100, n_freq=201)
    e, t = e_mod(ember.tensor(spec.numpy()), 1.25), t_mod(spec, 1.25)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=2e-3, rtol=1e-3)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict()) == ["phase_advance"]
    with pytest.raises(ValueError, match="fixed_rate"):
        e_mod(ember.tensor(spec.numpy()))
    inv_e = ET.InverseSpectrogram(n_fft=400, hop_length=100)
    inv_t = ta.transforms.InverseSpectrogram(n_fft=400, hop_length=100)
    np.testing.assert_allclose(inv_e(ember.tensor(spec.numpy()), 3000).numpy(),
                               inv_t(spec, 3000).numpy(), atol=1e-5)


def test_griffinlim_converges_like_torchaudio(ta):
    x = _wave((1, 2000))
    mag = torch.stft(torch.from_numpy(x), 256, 64, window=torch.hann_window(256),
                     return_complex=True).abs() ** 2
    e = ET.GriffinLim(n_fft=256, hop_length=64, n_iter=16, rand_init=False, length=2000)(
        ember.tensor(mag.numpy()))
    t = ta.transforms.GriffinLim(n_fft=256, hop_length=64, n_iter=16, rand_init=False,
                                 length=2000)(mag)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3)


@pytest.mark.parametrize("iid", [False, True])
def test_masking_modules(iid):
    ember.manual_seed(1)
    spec = ember.randn(3, 2, 40, 50).abs() + 1
    f = ET.FrequencyMasking(12, iid_masks=iid)(spec)
    rows_masked = (f == 0).all(dim=-1)                  # whole frequency rows go to zero
    assert bool(((f == 0) == rows_masked.unsqueeze(-1).expand_as(f)).all())
    assert int(rows_masked.sum(-1).max()) < 12
    t = ET.TimeMasking(15, iid_masks=iid, p=0.2)(spec, mask_value=-5.0)
    cols = (t == -5.0).all(dim=-2)
    assert int(cols.sum(-1).max()) < min(15, int(50 * 0.2))
    if not iid:                                         # the same span in every example
        assert bool((cols == cols[0, 0]).all())
    with pytest.raises(ValueError):
        ET.TimeMasking(5, p=1.5)


def test_mel_spectrogram_gradient_matches_torchaudio(ta):
    x = _wave((1, 2000)).astype(np.float64)
    xt = torch.from_numpy(x).requires_grad_()
    xe = ember.tensor(x, requires_grad=True)
    kw = dict(sample_rate=16000, n_fft=256, n_mels=20, hop_length=64)
    mt = ta.transforms.MelSpectrogram(**kw).double()
    me = ET.MelSpectrogram(**kw).double()
    lt = ta.transforms.AmplitudeToDB()(mt(xt)).mean()
    le = ET.AmplitudeToDB()(me(xe)).mean()
    lt.backward()
    le.backward()
    np.testing.assert_allclose(float(le), float(lt), rtol=1e-6)
    # float32 filter-bank buffers (rounded differently by 1 ulp) bound the agreement
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_inverse_mel_scale(ta):
    x = _wave((2, 3000))
    mel = ta.transforms.MelSpectrogram(sample_rate=16000, n_fft=256, n_mels=16)(
        torch.from_numpy(x))
    t = ta.transforms.InverseMelScale(n_stft=129, n_mels=16, sample_rate=16000)(mel)
    e = ET.InverseMelScale(n_stft=129, n_mels=16, sample_rate=16000)(ember.tensor(mel.numpy()))
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), atol=1e-3, rtol=1e-3)


def test_sliding_window_cmn_and_loudness_modules(ta):
    x = _wave((2, 100, 13))
    _check(ET.SlidingWindowCmn(40, 10, norm_vars=True),
           ta.transforms.SlidingWindowCmn(40, 10, norm_vars=True), ember.tensor(x),
           torch.from_numpy(x), atol=1e-4)
    w = _wave((2, 8000)) * 0.3
    _check(ET.Loudness(8000), ta.transforms.Loudness(8000), ember.tensor(w), torch.from_numpy(w),
           atol=1e-3)
