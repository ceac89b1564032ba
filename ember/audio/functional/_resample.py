"""Band-limited sinc resampling (torchaudio's kernel: windowed sinc, polyphase conv1d) and
the effects built on it (speed, pitch_shift)."""
import math

import ember
import ember.nn.functional as F
from ...functional import istft, stft
from ._spectral import phase_vocoder

__all__ = ["resample", "speed", "pitch_shift"]


def _get_sinc_resample_kernel(orig_freq, new_freq, gcd, lowpass_filter_width=6, rolloff=0.99,
                              resampling_method="sinc_interp_hann", beta=None, dtype=None):
    if not (int(orig_freq) == orig_freq and int(new_freq) == new_freq):
        raise Exception("Frequencies must be of integer type to ensure quality resampling "
                        "computation. Convert both frequencies to integers that keep their "
                        "ratio (see https://github.com/pytorch/audio/issues/1487).")
    aliases = {"sinc_interpolation": "sinc_interp_hann", "kaiser_window": "sinc_interp_kaiser"}
    resampling_method = aliases.get(resampling_method, resampling_method)
    if resampling_method not in ("sinc_interp_hann", "sinc_interp_kaiser"):
        raise ValueError(f"Invalid resampling method: {resampling_method}")
    orig_freq, new_freq = int(orig_freq) // gcd, int(new_freq) // gcd
    if lowpass_filter_width <= 0:
        raise ValueError("Low pass filter width should be positive.")
    base_freq = min(orig_freq, new_freq) * rolloff
    width = math.ceil(lowpass_filter_width * orig_freq / base_freq)
    idx_dtype = dtype if dtype is not None else ember.float64
    idx = ember.arange(-width, width + orig_freq, dtype=idx_dtype)[None, None] / orig_freq
    t = ember.arange(0, -new_freq, -1, dtype=idx_dtype)[:, None, None] / new_freq + idx
    t = (t * base_freq).clamp(-lowpass_filter_width, lowpass_filter_width)
    if resampling_method == "sinc_interp_hann":
        window = ember.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    else:
        beta = 14.769656459379492 if beta is None else float(beta)
        beta_t = ember.tensor(beta, dtype=t.dtype)
        window = (ember.i0(beta_t * ember.sqrt(1 - (t / lowpass_filter_width) ** 2))
                  / ember.i0(beta_t))
    t = t * math.pi
    safe = ember.where(t == 0, ember.ones_like(t), t)
    kernels = ember.where(t == 0, ember.ones_like(t), ember.sin(t) / safe)
    kernels = kernels * window * (base_freq / orig_freq)
    return kernels.to(ember.float32 if dtype is None else dtype), width


def _apply_sinc_resample_kernel(waveform, orig_freq, new_freq, gcd, kernel, width):
    if not waveform.is_floating_point():
        raise TypeError(f"Expected floating point type for waveform tensor, but received "
                        f"{waveform.dtype}.")
    orig_freq, new_freq = int(orig_freq) // gcd, int(new_freq) // gcd
    shape = tuple(waveform.shape)
    x = waveform.reshape(-1, shape[-1])
    num_wavs, length = x.shape
    x = F.pad(x, (width, width + orig_freq))
    out = F.conv1d(x[:, None], kernel, stride=orig_freq)
    out = out.transpose(1, 2).reshape(num_wavs, -1)
    out = out[..., :math.ceil(new_freq * length / orig_freq)]
    return out.reshape(shape[:-1] + tuple(out.shape[-1:]))


def resample(waveform, orig_freq, new_freq, lowpass_filter_width=6, rolloff=0.99,
             resampling_method="sinc_interp_hann", beta=None):
    """Resample (..., time) from orig_freq to new_freq by band-limited interpolation."""
    if orig_freq <= 0.0 or new_freq <= 0.0:
        raise ValueError("Original frequency and desired frequecy should be positive")
    if orig_freq == new_freq:
        return waveform
    gcd = math.gcd(int(orig_freq), int(new_freq))
    kernel, width = _get_sinc_resample_kernel(orig_freq, new_freq, gcd, lowpass_filter_width,
                                              rolloff, resampling_method, beta,
                                              waveform.dtype)
    return _apply_sinc_resample_kernel(waveform, orig_freq, new_freq, gcd, kernel, width)


def speed(waveform, orig_freq, factor, lengths=None):
    """Play `factor` times faster (pitch moves too): resample by orig_freq*factor -> orig."""
    source = int(factor * orig_freq)
    target = int(orig_freq)
    gcd = math.gcd(source, target)
    source, target = source // gcd, target // gcd
    out_lengths = None
    if lengths is not None:
        out_lengths = ember.ceil(lengths * target / source).to(lengths.dtype)
    return resample(waveform, source, target), out_lengths


def pitch_shift(waveform, sample_rate, n_steps, bins_per_octave=12, n_fft=512,
                win_length=None, hop_length=None, window=None):
    """Shift pitch by n_steps (of bins_per_octave per octave) keeping duration."""
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    window = ember.hann_window(win_length) if window is None else window
    shape = tuple(waveform.shape)
    x = waveform.reshape(-1, shape[-1])
    rate = 2.0 ** (-float(n_steps) / bins_per_octave)
    spec = stft(x, n_fft=n_fft, hop_length=hop_length, win_length=win_length, window=window,
                center=True, pad_mode="reflect", normalized=False, onesided=True,
                return_complex=True)
    phase_advance = ember.linspace(0, math.pi * hop_length, spec.shape[-2])[..., None]
    stretched = phase_vocoder(spec, rate, phase_advance)
    len_stretch = int(round(shape[-1] / rate))
    y = istft(stretched, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
              window=window, length=len_stretch)
    y = resample(y, int(sample_rate / rate), sample_rate)
    if y.shape[-1] > shape[-1]:
        y = y[..., :shape[-1]]
    else:
        y = F.pad(y, [0, shape[-1] - y.shape[-1]])
    return y.reshape(shape[:-1] + tuple(y.shape[-1:]))
