"""torchaudio.functional's spectral features (same formulas as torchaudio 2.x, in ember ops)."""
import math
import warnings

import ember
import ember.nn.functional as F
from ...functional import istft, stft

__all__ = ["spectrogram", "inverse_spectrogram", "griffinlim", "amplitude_to_DB",
           "DB_to_amplitude", "melscale_fbanks", "linear_fbanks", "create_dct",
           "mu_law_encoding", "mu_law_decoding", "phase_vocoder", "mask_along_axis",
           "mask_along_axis_iid", "compute_deltas", "spectral_centroid"]


def _get_spec_norms(normalized):
    if isinstance(normalized, str):
        if normalized not in ("frame_length", "window"):
            raise ValueError(f"Invalid normalized parameter: {normalized}")
        return normalized == "frame_length", normalized == "window"
    if isinstance(normalized, bool):
        return False, normalized
    raise TypeError("Input type not supported")


def spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power, normalized,
                center=True, pad_mode="reflect", onesided=True, return_complex=None):
    """|STFT|**power of (..., time) -> (..., freq, frames); complex when power is None."""
    if return_complex is not None:
        warnings.warn("`return_complex` argument is now deprecated and is not effective.")
    if pad > 0:
        waveform = F.pad(waveform, (pad, pad), "constant")
    frame_length_norm, window_norm = _get_spec_norms(normalized)
    shape = tuple(waveform.shape)
    spec = stft(waveform.reshape(-1, shape[-1]), n_fft=n_fft, hop_length=hop_length,
                win_length=win_length, window=window, center=center, pad_mode=pad_mode,
                normalized=frame_length_norm, onesided=onesided, return_complex=True)
    spec = spec.reshape(shape[:-1] + tuple(spec.shape[-2:]))
    if window_norm:
        spec = spec / window.pow(2.0).sum().sqrt()
    if power is None:
        return spec
    return spec.abs() if power == 1.0 else spec.abs().pow(power)


def inverse_spectrogram(spectrogram, length, pad, window, n_fft, hop_length, win_length,
                        normalized, center=True, pad_mode="reflect", onesided=True):
    """Complex spectrogram (..., freq, frames) -> waveform (..., time) by istft."""
    frame_length_norm, window_norm = _get_spec_norms(normalized)
    if not spectrogram.is_complex():
        raise ValueError("Expected `spectrogram` to be complex dtype.")
    if window_norm:
        spectrogram = spectrogram * window.pow(2.0).sum().sqrt()
    shape = tuple(spectrogram.shape)
    spec = spectrogram.reshape(-1, shape[-2], shape[-1])
    wav = istft(spec, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                window=window, center=center, normalized=frame_length_norm,
                onesided=onesided, length=length + 2 * pad if length is not None else None,
                return_complex=False)
    if length is not None and pad > 0:
        wav = wav[:, pad:-pad]
    return wav.reshape(shape[:-2] + tuple(wav.shape[-1:]))


def griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum,
               length, rand_init):
    """Phase recovery (Griffin-Lim with momentum) from a magnitude spectrogram."""
    if not 0 <= momentum < 1:
        raise ValueError(f"momentum must be in range [0, 1). Found: {momentum}")
    momentum = momentum / (1 + momentum)
    shape = tuple(specgram.shape)
    specgram = specgram.reshape(-1, shape[-2], shape[-1]).pow(1 / power)
    ctype = ember.complex128 if specgram.dtype == ember.float64 else ember.complex64
    if rand_init:
        angles = ember.rand(tuple(specgram.shape), dtype=ctype)
    else:
        angles = ember.full(tuple(specgram.shape), 1, dtype=ctype)
    tprev = ember.tensor(0.0, dtype=specgram.dtype)
    for _ in range(n_iter):
        inverse = istft(specgram * angles, n_fft=n_fft, hop_length=hop_length,
                        win_length=win_length, window=window, length=length)
        rebuilt = stft(inverse, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                       window=window, center=True, pad_mode="reflect", normalized=False,
                       onesided=True, return_complex=True)
        angles = rebuilt
        if momentum:
            angles = angles - tprev * momentum
        angles = angles / (angles.abs() + 1e-16)
        tprev = rebuilt
    waveform = istft(specgram * angles, n_fft=n_fft, hop_length=hop_length,
                     win_length=win_length, window=window, length=length)
    return waveform.reshape(shape[:-2] + tuple(waveform.shape[-1:]))


def amplitude_to_DB(x, multiplier, amin, db_multiplier, top_db=None):
    """multiplier*log10(max(x, amin)) - multiplier*db_multiplier, floored top_db below max."""
    x_db = multiplier * ember.log10(ember.clamp(x, min=amin))
    x_db = x_db - multiplier * db_multiplier
    if top_db is not None:
        shape = tuple(x_db.shape)
        channels = shape[-3] if x_db.dim() > 2 else 1
        x_db = x_db.reshape(-1, channels, shape[-2], shape[-1])
        floor = (x_db.amax(dim=(-3, -2, -1)) - top_db).view(-1, 1, 1, 1)
        x_db = ember.max(x_db, floor).reshape(shape)
    return x_db


def DB_to_amplitude(x, ref, power):
    """ref * (10**(x/10))**power: the inverse of amplitude_to_DB (without top_db)."""
    return ref * ember.pow(ember.pow(10.0, 0.1 * x), power)


def _hz_to_mel(freq, mel_scale="htk"):
    if mel_scale not in ("slaney", "htk"):
        raise ValueError('mel_scale should be one of "htk" or "slaney".')
    if mel_scale == "htk":
        return 2595.0 * math.log10(1.0 + freq / 700.0)
    f_sp = 200.0 / 3
    if freq >= 1000.0:
        return 1000.0 / f_sp + math.log(freq / 1000.0) / (math.log(6.4) / 27.0)
    return freq / f_sp


def _mel_to_hz(mels, mel_scale="htk"):
    if mel_scale not in ("slaney", "htk"):
        raise ValueError('mel_scale should be one of "htk" or "slaney".')
    if mel_scale == "htk":
        return 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    f_sp = 200.0 / 3
    min_log_mel = 1000.0 / f_sp
    logstep = math.log(6.4) / 27.0
    return ember.where(mels >= min_log_mel,
                       1000.0 * ember.exp(logstep * (mels - min_log_mel)), f_sp * mels)


def _create_triangular_filterbank(all_freqs, f_pts):
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    return ember.clamp(ember.min(down, up), min=0.0)


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm=None, mel_scale="htk"):
    """Triangular mel filter bank, (n_freqs, n_mels)."""
    if norm is not None and norm != "slaney":
        raise ValueError('norm must be one of None or "slaney"')
    all_freqs = ember.linspace(0, sample_rate // 2, n_freqs)
    m_pts = ember.linspace(_hz_to_mel(f_min, mel_scale), _hz_to_mel(f_max, mel_scale),
                           n_mels + 2)
    f_pts = _mel_to_hz(m_pts, mel_scale)
    fb = _create_triangular_filterbank(all_freqs, f_pts)
    if norm == "slaney":
        fb = fb * (2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])).unsqueeze(0)
    if bool((fb.amax(dim=0) == 0.0).any()):
        warnings.warn(f"At least one mel filterbank has all zero values. The value for "
                      f"`n_mels` ({n_mels}) may be set too high. Or, the value for `n_freqs` "
                      f"({n_freqs}) may be set too low.")
    return fb


def linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate):
    """Linearly spaced triangular filter bank, (n_freqs, n_filter)."""
    all_freqs = ember.linspace(0, sample_rate // 2, n_freqs)
    return _create_triangular_filterbank(all_freqs, ember.linspace(f_min, f_max, n_filter + 2))


def create_dct(n_mfcc, n_mels, norm):
    """DCT-II matrix (n_mels, n_mfcc), 'ortho' or unnormalised (x2)."""
    if norm is not None and norm != "ortho":
        raise ValueError('norm must be either "ortho" or None')
    n = ember.arange(float(n_mels))
    k = ember.arange(float(n_mfcc)).unsqueeze(1)
    dct = ember.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    if norm is None:
        dct = dct * 2.0
    else:
        scale = ember.ones(n_mfcc, 1)
        scale[0] = 1.0 / math.sqrt(2.0)
        dct = dct * scale * math.sqrt(2.0 / float(n_mels))
    return dct.t()


def mu_law_encoding(x, quantization_channels):
    """[-1, 1] floats -> int64 codes in [0, quantization_channels)."""
    mu = quantization_channels - 1.0
    if not x.is_floating_point():
        warnings.warn("The input Tensor must be of floating type.")
        x = x.to(ember.float32)
    mu_t = ember.tensor(mu, dtype=x.dtype)
    x_mu = ember.sign(x) * ember.log1p(mu_t * ember.abs(x)) / ember.log1p(mu_t)
    return ((x_mu + 1) / 2 * mu + 0.5).to(ember.int64)


def mu_law_decoding(x_mu, quantization_channels):
    """Codes in [0, quantization_channels) -> floats in [-1, 1]."""
    mu = quantization_channels - 1.0
    if not x_mu.is_floating_point():
        x_mu = x_mu.to(ember.float32)
    mu_t = ember.tensor(mu, dtype=x_mu.dtype)
    x = x_mu / mu_t * 2 - 1.0
    return ember.sign(x) * (ember.exp(ember.abs(x) * ember.log1p(mu_t)) - 1.0) / mu_t


def phase_vocoder(complex_specgrams, rate, phase_advance):
    """Time-stretch a complex STFT by `rate` keeping pitch: ceil(frames / rate) frames."""
    if rate == 1.0:
        return complex_specgrams
    shape = tuple(complex_specgrams.shape)
    spec = complex_specgrams.reshape((-1,) + shape[-2:])
    real_dtype = spec.real.dtype
    time_steps = ember.arange(0, spec.shape[-1], rate, dtype=real_dtype)
    alphas = time_steps % 1.0
    phase_0 = spec[..., :1].angle()
    spec = F.pad(spec, [0, 2])
    spec_0 = spec.index_select(-1, time_steps.long())
    spec_1 = spec.index_select(-1, (time_steps + 1).long())
    angle_0, angle_1 = spec_0.angle(), spec_1.angle()
    norm_0, norm_1 = spec_0.abs(), spec_1.abs()
    phase = angle_1 - angle_0 - phase_advance
    phase = phase - 2 * math.pi * ember.round(phase / (2 * math.pi))
    phase = phase + phase_advance
    phase = ember.cat([phase_0, phase[..., :-1]], dim=-1)
    phase_acc = ember.cumsum(phase, -1)
    mag = alphas * norm_1 + (1 - alphas) * norm_0
    out = ember.polar(mag, phase_acc)
    return out.reshape(shape[:-2] + tuple(out.shape[1:]))


def _get_mask_param(mask_param, p, axis_length):
    return mask_param if p == 1.0 else min(mask_param, int(axis_length * p))


def _check_mask_args(dim, axis, p, min_dim):
    if dim < min_dim:
        raise ValueError(f"Spectrogram must have at least {min_dim} dimensions ({dim} given).")
    if axis not in (dim - 2, dim - 1):
        raise ValueError(f"Only Frequency and Time masking are supported (axis {dim - 2} and "
                         f"axis {dim - 1} supported; {axis} given).")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"The value of p must be between 0.0 and 1.0 ({p} given).")


def mask_along_axis_iid(specgrams, mask_param, mask_value, axis, p=1.0):
    """SpecAugment mask [v0, v0+v) drawn independently per example (..., freq, time)."""
    dim = specgrams.dim()
    _check_mask_args(dim, axis, p, 3)
    mask_param = _get_mask_param(mask_param, p, specgrams.shape[axis])
    if mask_param < 1:
        return specgrams
    batch = tuple(specgrams.shape[:dim - 2])
    value = ember.rand(batch, dtype=specgrams.dtype) * mask_param
    min_value = ember.rand(batch, dtype=specgrams.dtype) * (specgrams.shape[axis] - value)
    start = min_value.long()[..., None, None]
    end = (min_value.long() + value.long())[..., None, None]
    mask = ember.arange(0, specgrams.shape[axis], dtype=specgrams.dtype)
    spec = specgrams.transpose(axis, -1)
    cond = (mask >= start) & (mask < end)
    if isinstance(mask_value, ember.Tensor):
        spec = ember.where(cond, mask_value.to(spec.dtype), spec)
    else:
        spec = spec.masked_fill(cond, mask_value)
    return spec.transpose(axis, -1)


def mask_along_axis(specgram, mask_param, mask_value, axis, p=1.0):
    """SpecAugment mask [v0, v0+v) shared by every example in the batch."""
    dim = specgram.dim()
    _check_mask_args(dim, axis, p, 2)
    mask_param = _get_mask_param(mask_param, p, specgram.shape[axis])
    if mask_param < 1:
        return specgram
    shape = tuple(specgram.shape)
    spec = specgram.reshape((-1,) + shape[-2:])
    value = float(ember.rand(1)) * mask_param
    min_value = float(ember.rand(1)) * (spec.shape[axis - dim + 3] - value)
    start, end = int(min_value), int(min_value) + int(value)
    mask = ember.arange(0, spec.shape[axis - dim + 3], dtype=spec.dtype)
    mask = (mask >= start) & (mask < end)
    if axis == dim - 2:
        mask = mask.unsqueeze(-1)
    return spec.masked_fill(mask, mask_value).reshape(shape)


def compute_deltas(specgram, win_length=5, mode="replicate"):
    """Regression deltas over time: sum n (c[t+n]-c[t-n]) / (2 sum n^2)."""
    if win_length < 3:
        raise ValueError(f"Window length should be greater than or equal to 3. Found "
                         f"win_length {win_length}")
    shape = tuple(specgram.shape)
    spec = specgram.reshape(1, -1, shape[-1])
    n = (win_length - 1) // 2
    denom = n * (n + 1) * (2 * n + 1) / 3
    spec = F.pad(spec, (n, n), mode=mode)
    kernel = ember.arange(-n, n + 1, 1, dtype=spec.dtype).repeat(spec.shape[1], 1, 1)
    return (F.conv1d(spec, kernel, groups=spec.shape[1]) / denom).reshape(shape)


def spectral_centroid(waveform, sample_rate, pad, window, n_fft, hop_length, win_length):
    """Magnitude-weighted mean frequency per frame, (..., time)."""
    specgram = spectrogram(waveform, pad=pad, window=window, n_fft=n_fft,
                           hop_length=hop_length, win_length=win_length, power=1.0,
                           normalized=False)
    freqs = ember.linspace(0, sample_rate // 2, 1 + n_fft // 2).reshape((-1, 1))
    return (freqs * specgram).sum(dim=-2) / specgram.sum(dim=-2)
