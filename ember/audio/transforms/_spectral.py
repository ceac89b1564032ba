"""torchaudio.transforms' spectral modules (same buffers: window, fb, dct_mat, filter_mat,
phase_advance, so torchaudio state_dicts load)."""
import math
import warnings

import ember
from ember import nn
from .. import functional as F

__all__ = ["Spectrogram", "InverseSpectrogram", "GriffinLim", "AmplitudeToDB", "MelScale",
           "InverseMelScale",
           "MelSpectrogram", "MFCC", "LFCC", "SpectralCentroid", "ComputeDeltas", "TimeStretch"]


def _make_window(window_fn, win_length, wkwargs):
    return window_fn(win_length) if wkwargs is None else window_fn(win_length, **wkwargs)


class Spectrogram(nn.Module):
    """Waveform (..., time) -> spectrogram (..., freq, frames)."""

    def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0,
                 window_fn=ember.hann_window, power=2.0, normalized=False, wkwargs=None,
                 center=True, pad_mode="reflect", onesided=True, return_complex=None):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad, self.power, self.normalized = pad, power, normalized
        self.center, self.pad_mode, self.onesided = center, pad_mode, onesided
        if return_complex is not None:
            warnings.warn("`return_complex` argument is now deprecated and is not effective.")

    def forward(self, waveform):
        return F.spectrogram(waveform, self.pad, self.window, self.n_fft, self.hop_length,
                             self.win_length, self.power, self.normalized, self.center,
                             self.pad_mode, self.onesided)


class InverseSpectrogram(nn.Module):
    """Complex spectrogram -> waveform (inverse STFT)."""

    def __init__(self, n_fft=400, win_length=None, hop_length=None, pad=0,
                 window_fn=ember.hann_window, normalized=False, wkwargs=None, center=True,
                 pad_mode="reflect", onesided=True):
        super().__init__()
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad, self.normalized, self.center = pad, normalized, center
        self.pad_mode, self.onesided = pad_mode, onesided

    def forward(self, spectrogram, length=None):
        return F.inverse_spectrogram(spectrogram, length, self.pad, self.window, self.n_fft,
                                     self.hop_length, self.win_length, self.normalized,
                                     self.center, self.pad_mode, self.onesided)


class GriffinLim(nn.Module):
    """Magnitude spectrogram -> waveform by Griffin-Lim phase recovery."""

    def __init__(self, n_fft=400, n_iter=32, win_length=None, hop_length=None,
                 window_fn=ember.hann_window, power=2.0, wkwargs=None, momentum=0.99,
                 length=None, rand_init=True):
        super().__init__()
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum must be in the range [0, 1). Found: {momentum}")
        self.n_fft, self.n_iter = n_fft, n_iter
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.length, self.power, self.momentum, self.rand_init = length, power, momentum, \
            rand_init

    def forward(self, specgram):
        return F.griffinlim(specgram, self.window, self.n_fft, self.hop_length,
                            self.win_length, self.power, self.n_iter, self.momentum,
                            self.length, self.rand_init)


class AmplitudeToDB(nn.Module):
    """Power ('power') or amplitude ('magnitude') -> decibels, floored top_db below max."""

    def __init__(self, stype="power", top_db=None):
        super().__init__()
        self.stype = stype
        if top_db is not None and top_db < 0:
            raise ValueError("top_db must be positive value")
        self.top_db = top_db
        self.multiplier = 10.0 if stype == "power" else 20.0
        self.amin = 1e-10
        self.ref_value = 1.0
        self.db_multiplier = math.log10(max(self.amin, self.ref_value))

    def forward(self, x):
        return F.amplitude_to_DB(x, self.multiplier, self.amin, self.db_multiplier, self.top_db)


class MelScale(nn.Module):
    """Linear-frequency spectrogram (..., n_stft, time) -> mel (..., n_mels, time)."""

    def __init__(self, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None, n_stft=201,
                 norm=None, mel_scale="htk"):
        super().__init__()
        self.n_mels, self.sample_rate = n_mels, sample_rate
        self.f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.f_min, self.n_stft, self.norm, self.mel_scale = f_min, n_stft, norm, mel_scale
        if f_min > self.f_max:
            raise ValueError(f"Require f_min: {f_min} <= f_max: {self.f_max}")
        self.register_buffer("fb", F.melscale_fbanks(n_stft, f_min, self.f_max, n_mels,
                                                     sample_rate, norm, mel_scale))

    def forward(self, specgram):
        return ember.matmul(specgram.transpose(-1, -2), self.fb).transpose(-1, -2)


class InverseMelScale(nn.Module):
    """Mel spectrogram -> linear-frequency spectrogram by least squares (clamped >= 0)."""

    def __init__(self, n_stft, n_mels=128, sample_rate=16000, f_min=0.0, f_max=None,
                 norm=None, mel_scale="htk", driver="gels"):
        super().__init__()
        self.n_stft, self.n_mels, self.sample_rate = n_stft, n_mels, sample_rate
        self.f_max = f_max or float(sample_rate // 2)
        self.f_min, self.norm, self.mel_scale, self.driver = f_min, norm, mel_scale, driver
        if f_min > self.f_max:
            raise ValueError(f"Require f_min: {f_min} <= f_max: {self.f_max}")
        if driver not in ("gels", "gelsy", "gelsd", "gelss"):
            raise ValueError(f'driver must be one of ["gels", "gelsy", "gelsd", "gelss"]. '
                             f"Found {driver}.")
        self.register_buffer("fb", F.melscale_fbanks(n_stft, f_min, self.f_max, n_mels,
                                                     sample_rate, norm, mel_scale))

    def forward(self, melspec):
        shape = tuple(melspec.shape)
        mel = melspec.reshape(-1, shape[-2], shape[-1])
        if self.n_mels != shape[-2]:
            raise ValueError(f"Expected an input with {self.n_mels} mel bins. Found: "
                             f"{shape[-2]}")
        fb_t = self.fb.transpose(-1, -2)[None].expand(mel.shape[0], -1, -1)
        spec = ember.relu(ember.linalg.lstsq(fb_t, mel).solution)
        return spec.reshape(shape[:-2] + (self.fb.shape[0], shape[-1]))


class MelSpectrogram(nn.Module):
    """Waveform -> mel spectrogram (Spectrogram then MelScale)."""

    def __init__(self, sample_rate=16000, n_fft=400, win_length=None, hop_length=None,
                 f_min=0.0, f_max=None, pad=0, n_mels=128, window_fn=ember.hann_window,
                 power=2.0, normalized=False, wkwargs=None, center=True, pad_mode="reflect",
                 onesided=None, norm=None, mel_scale="htk"):
        super().__init__()
        if onesided is not None:
            warnings.warn("Argument 'onesided' has been deprecated and has no influence on "
                          "the behavior of this module.")
        self.sample_rate, self.n_fft = sample_rate, n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.pad, self.power, self.normalized = pad, power, normalized
        self.n_mels, self.f_max, self.f_min = n_mels, f_max, f_min
        self.spectrogram = Spectrogram(n_fft=n_fft, win_length=self.win_length,
                                       hop_length=self.hop_length, pad=pad,
                                       window_fn=window_fn, power=power,
                                       normalized=normalized, wkwargs=wkwargs, center=center,
                                       pad_mode=pad_mode, onesided=True)
        self.mel_scale = MelScale(n_mels, sample_rate, f_min, f_max, n_fft // 2 + 1, norm,
                                  mel_scale)

    def forward(self, waveform):
        return self.mel_scale(self.spectrogram(waveform))


class MFCC(nn.Module):
    """Waveform -> mel-frequency cepstral coefficients (DCT-II of log-mel)."""

    def __init__(self, sample_rate=16000, n_mfcc=40, dct_type=2, norm="ortho", log_mels=False,
                 melkwargs=None):
        super().__init__()
        if dct_type != 2:
            raise ValueError(f"DCT type not supported: {dct_type}")
        self.sample_rate, self.n_mfcc, self.dct_type, self.norm = sample_rate, n_mfcc, 2, norm
        self.top_db = 80.0
        self.amplitude_to_DB = AmplitudeToDB("power", self.top_db)
        self.MelSpectrogram = MelSpectrogram(sample_rate=sample_rate, **(melkwargs or {}))
        if n_mfcc > self.MelSpectrogram.n_mels:
            raise ValueError("Cannot select more MFCC coefficients than # mel bins")
        self.register_buffer("dct_mat", F.create_dct(n_mfcc, self.MelSpectrogram.n_mels, norm))
        self.log_mels = log_mels

    def forward(self, waveform):
        mel = self.MelSpectrogram(waveform)
        mel = ember.log(mel + 1e-6) if self.log_mels else self.amplitude_to_DB(mel)
        return ember.matmul(mel.transpose(-1, -2), self.dct_mat).transpose(-1, -2)


class LFCC(nn.Module):
    """Waveform -> linear-frequency cepstral coefficients."""

    def __init__(self, sample_rate=16000, n_filter=128, f_min=0.0, f_max=None, n_lfcc=40,
                 dct_type=2, norm="ortho", log_lf=False, speckwargs=None):
        super().__init__()
        if dct_type != 2:
            raise ValueError(f"DCT type not supported: {dct_type}")
        self.sample_rate, self.f_min = sample_rate, f_min
        self.f_max = f_max if f_max is not None else float(sample_rate // 2)
        self.n_filter, self.n_lfcc, self.dct_type, self.norm = n_filter, n_lfcc, 2, norm
        self.top_db = 80.0
        self.amplitude_to_DB = AmplitudeToDB("power", self.top_db)
        self.Spectrogram = Spectrogram(**(speckwargs or {}))
        if n_lfcc > self.Spectrogram.n_fft:
            raise ValueError("Cannot select more LFCC coefficients than # fft bins")
        self.register_buffer("filter_mat", F.linear_fbanks(
            self.Spectrogram.n_fft // 2 + 1, f_min, self.f_max, n_filter, sample_rate))
        self.register_buffer("dct_mat", F.create_dct(n_lfcc, n_filter, norm))
        self.log_lf = log_lf

    def forward(self, waveform):
        spec = self.Spectrogram(waveform)
        spec = ember.matmul(spec.transpose(-1, -2), self.filter_mat).transpose(-1, -2)
        spec = ember.log(spec + 1e-6) if self.log_lf else self.amplitude_to_DB(spec)
        return ember.matmul(spec.transpose(-1, -2), self.dct_mat).transpose(-1, -2)


class SpectralCentroid(nn.Module):
    """Waveform -> spectral centroid per frame."""

    def __init__(self, sample_rate, n_fft=400, win_length=None, hop_length=None, pad=0,
                 window_fn=ember.hann_window, wkwargs=None):
        super().__init__()
        self.sample_rate, self.n_fft = sample_rate, n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", _make_window(window_fn, self.win_length, wkwargs))
        self.pad = pad

    def forward(self, waveform):
        return F.spectral_centroid(waveform, self.sample_rate, self.pad, self.window,
                                   self.n_fft, self.hop_length, self.win_length)


class ComputeDeltas(nn.Module):
    """Delta (regression) coefficients of a spectrogram over time."""

    def __init__(self, win_length=5, mode="replicate"):
        super().__init__()
        self.win_length, self.mode = win_length, mode

    def forward(self, specgram):
        return F.compute_deltas(specgram, win_length=self.win_length, mode=self.mode)


class TimeStretch(nn.Module):
    """Stretch a complex STFT in time by a rate, keeping pitch (phase vocoder)."""

    def __init__(self, hop_length=None, n_freq=201, fixed_rate=None):
        super().__init__()
        self.fixed_rate = fixed_rate
        n_fft = (n_freq - 1) * 2
        hop_length = hop_length if hop_length is not None else n_fft // 2
        self.register_buffer("phase_advance",
                             ember.linspace(0, math.pi * hop_length, n_freq)[..., None])

    def forward(self, complex_specgrams, overriding_rate=None):
        if not complex_specgrams.is_complex():
            warnings.warn("The input to TimeStretch must be complex type. Providing "
                          "non-complex tensor produces invalid results.", stacklevel=4)
        rate = self.fixed_rate if overriding_rate is None else overriding_rate
        if rate is None:
            raise ValueError("If no fixed_rate is specified, must pass a valid rate to the "
                             "forward method.")
        return F.phase_vocoder(complex_specgrams, rate, self.phase_advance)
