"""torchaudio.transforms' waveform modules: resampling, speed/pitch, fades, volume,
mu-law and SpecAugment masks."""
import math

import ember
from ember import nn
from .. import functional as F
from ..functional._resample import _apply_sinc_resample_kernel, _get_sinc_resample_kernel

__all__ = ["Resample", "Speed", "PitchShift", "Fade", "Vol", "MuLawEncoding",
           "MuLawDecoding", "FrequencyMasking", "TimeMasking", "SlidingWindowCmn", "Loudness"]


class Resample(nn.Module):
    """Resample with a precomputed sinc kernel (buffer `kernel`)."""

    def __init__(self, orig_freq=16000, new_freq=16000, resampling_method="sinc_interp_hann",
                 lowpass_filter_width=6, rolloff=0.99, beta=None, *, dtype=None):
        super().__init__()
        self.orig_freq, self.new_freq = orig_freq, new_freq
        self.gcd = math.gcd(int(orig_freq), int(new_freq))
        self.resampling_method = resampling_method
        self.lowpass_filter_width, self.rolloff, self.beta = lowpass_filter_width, rolloff, beta
        if orig_freq != new_freq:
            kernel, self.width = _get_sinc_resample_kernel(
                orig_freq, new_freq, self.gcd, lowpass_filter_width, rolloff,
                resampling_method, beta, dtype=dtype)
            self.register_buffer("kernel", kernel)

    def forward(self, waveform):
        if self.orig_freq == self.new_freq:
            return waveform
        return _apply_sinc_resample_kernel(waveform, self.orig_freq, self.new_freq, self.gcd,
                                           self.kernel, self.width)


class Speed(nn.Module):
    """Speed up by `factor` (duration and pitch change), returning (waveform, lengths)."""

    def __init__(self, orig_freq, factor):
        super().__init__()
        self.orig_freq, self.factor = orig_freq, factor
        source, target = int(factor * orig_freq), int(orig_freq)
        gcd = math.gcd(source, target)
        self.source_sample_rate, self.target_sample_rate = source // gcd, target // gcd
        self.resampler = Resample(orig_freq=self.source_sample_rate,
                                  new_freq=self.target_sample_rate)

    def forward(self, waveform, lengths=None):
        out_lengths = None
        if lengths is not None:
            out_lengths = ember.ceil(lengths * self.target_sample_rate
                                     / self.source_sample_rate).to(lengths.dtype)
        return self.resampler(waveform), out_lengths


class PitchShift(nn.Module):
    """Shift pitch by n_steps keeping duration (phase vocoder + resample)."""

    def __init__(self, sample_rate, n_steps, bins_per_octave=12, n_fft=512, win_length=None,
                 hop_length=None, window_fn=ember.hann_window, wkwargs=None):
        super().__init__()
        self.sample_rate, self.n_steps, self.bins_per_octave = sample_rate, n_steps, \
            bins_per_octave
        self.n_fft = n_fft
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 4
        window = (window_fn(self.win_length) if wkwargs is None
                  else window_fn(self.win_length, **wkwargs))
        self.register_buffer("window", window)

    def forward(self, waveform):
        return F.pitch_shift(waveform, self.sample_rate, self.n_steps, self.bins_per_octave,
                             self.n_fft, self.win_length, self.hop_length, self.window)


def _fade_curve(n, shape, fade_in):
    fade = ember.linspace(0, 1, n)
    if fade_in:
        curves = {"linear": lambda f: f, "exponential": lambda f: ember.pow(2, f - 1) * f,
                  "logarithmic": lambda f: ember.log10(0.1 + f) + 1,
                  "quarter_sine": lambda f: ember.sin(f * math.pi / 2),
                  "half_sine": lambda f: ember.sin(f * math.pi - math.pi / 2) / 2 + 0.5}
    else:
        curves = {"linear": lambda f: -f + 1,
                  "exponential": lambda f: ember.pow(2, -f) * (1 - f),
                  "logarithmic": lambda f: ember.log10(1.1 - f) + 1,
                  "quarter_sine": lambda f: ember.sin(f * math.pi / 2 + math.pi / 2),
                  "half_sine": lambda f: ember.sin(f * math.pi + math.pi / 2) / 2 + 0.5}
    if shape not in curves:
        raise ValueError(f"fade_shape must be one of {sorted(curves)}, got {shape!r}")
    return curves[shape](fade)


class Fade(nn.Module):
    """Fade in/out with linear, exponential, logarithmic, quarter_sine or half_sine shape."""

    def __init__(self, fade_in_len=0, fade_out_len=0, fade_shape="linear"):
        super().__init__()
        self.fade_in_len, self.fade_out_len, self.fade_shape = fade_in_len, fade_out_len, \
            fade_shape

    def forward(self, waveform):
        n = waveform.shape[-1]
        fin = ember.cat((_fade_curve(self.fade_in_len, self.fade_shape, True),
                         ember.ones(n - self.fade_in_len))).clamp(0, 1)
        fout = ember.cat((ember.ones(n - self.fade_out_len),
                          _fade_curve(self.fade_out_len, self.fade_shape, False))).clamp(0, 1)
        return fin * fout * waveform


class Vol(nn.Module):
    """Scale volume by an amplitude ratio, a power ratio or decibels; clamps to [-1, 1]."""

    def __init__(self, gain, gain_type="amplitude"):
        super().__init__()
        self.gain, self.gain_type = gain, gain_type
        if gain_type in ("amplitude", "power") and gain < 0:
            raise ValueError("If gain_type = amplitude or power, gain must be positive.")

    def forward(self, waveform):
        if self.gain_type == "amplitude":
            waveform = waveform * self.gain
        if self.gain_type == "db":
            waveform = F.gain(waveform, self.gain)
        if self.gain_type == "power":
            waveform = F.gain(waveform, 10 * math.log10(self.gain))
        return ember.clamp(waveform, -1, 1)


class MuLawEncoding(nn.Module):
    def __init__(self, quantization_channels=256):
        super().__init__()
        self.quantization_channels = quantization_channels

    def forward(self, x):
        return F.mu_law_encoding(x, self.quantization_channels)


class MuLawDecoding(nn.Module):
    def __init__(self, quantization_channels=256):
        super().__init__()
        self.quantization_channels = quantization_channels

    def forward(self, x_mu):
        return F.mu_law_decoding(x_mu, self.quantization_channels)


class _AxisMasking(nn.Module):
    def __init__(self, mask_param, axis, iid_masks, p=1.0):
        super().__init__()
        self.mask_param, self.axis, self.iid_masks, self.p = mask_param, axis, iid_masks, p

    def forward(self, specgram, mask_value=0.0):
        axis = self.axis + specgram.dim() - 3
        if self.iid_masks:
            return F.mask_along_axis_iid(specgram, self.mask_param, mask_value, axis, p=self.p)
        value = float(mask_value) if isinstance(mask_value, ember.Tensor) else mask_value
        return F.mask_along_axis(specgram, self.mask_param, value, axis, p=self.p)


class FrequencyMasking(_AxisMasking):
    """SpecAugment: mask a random band of frequency rows."""

    def __init__(self, freq_mask_param, iid_masks=False):
        super().__init__(freq_mask_param, 1, iid_masks)


class TimeMasking(_AxisMasking):
    """SpecAugment: mask a random span of time columns."""

    def __init__(self, time_mask_param, iid_masks=False, p=1.0):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")
        super().__init__(time_mask_param, 2, iid_masks, p=p)


class SlidingWindowCmn(nn.Module):
    """Sliding-window cepstral mean (and variance) normalisation, Kaldi-style."""

    def __init__(self, cmn_window=600, min_cmn_window=100, center=False, norm_vars=False):
        super().__init__()
        self.cmn_window, self.min_cmn_window = cmn_window, min_cmn_window
        self.center, self.norm_vars = center, norm_vars

    def forward(self, specgram):
        return F.sliding_window_cmn(specgram, self.cmn_window, self.min_cmn_window,
                                    self.center, self.norm_vars)


class Loudness(nn.Module):
    """Integrated loudness (LKFS, ITU-R BS.1770-4) of (..., channels, time) audio."""

    def __init__(self, sample_rate):
        super().__init__()
        self.sample_rate = sample_rate

    def forward(self, wavefrom):
        return F.loudness(wavefrom, self.sample_rate)
