"""torchaudio.functional's filters: lfilter (IIR via scipy.signal, differentiable in the
waveform) and the biquad designs (Audio-EQ-Cookbook formulas, as torchaudio and sox use)."""
import math

import numpy as np
import scipy.signal

import ember
from ember.autograd import Function

__all__ = ["lfilter", "filtfilt", "biquad", "lowpass_biquad", "highpass_biquad",
           "allpass_biquad", "bandpass_biquad", "bandreject_biquad", "band_biquad",
           "equalizer_biquad", "bass_biquad", "treble_biquad", "gain", "dcshift",
           "contrast", "preemphasis", "deemphasis"]


def _run_filters(x, b, a):
    """x (N, F, T) numpy; b/a (F, K) normalised; each filter on its own channel."""
    out = np.empty_like(x)
    for f in range(b.shape[0]):
        out[:, f] = scipy.signal.lfilter(b[f], a[f], x[:, f], axis=-1)
    return out


class _LFilter(Function):
    """y = H x for a linear time-invariant filter; the vjp is H^T g = flip(H flip(g))."""

    @staticmethod
    def forward(ctx, x, b, a):
        ctx.b, ctx.a = b, a
        y = _run_filters(x.detach().numpy().astype(np.float64), b, a)
        return ember.from_numpy(y.astype(x.detach().numpy().dtype))

    @staticmethod
    def backward(ctx, grad):
        return _LFilter.apply(grad.flip(-1), ctx.b, ctx.a).flip(-1), None, None


def lfilter(waveform, a_coeffs, b_coeffs, clamp=True, batching=True):
    """IIR filter y[n] = (sum b[k]x[n-k] - sum_{k>0} a[k]y[n-k]) / a[0] along the last dim."""
    if tuple(a_coeffs.shape) != tuple(b_coeffs.shape):
        raise ValueError(f"Expected coeffs to be the same size.Found: a_coeffs size: "
                         f"{tuple(a_coeffs.shape)}, b_coeffs size: {tuple(b_coeffs.shape)}")
    if a_coeffs.dim() > 2 or a_coeffs.dim() == 0:
        raise ValueError(f"Expected coeffs to have 1 or 2 dimensions. Found: {a_coeffs.dim()}")
    if a_coeffs.requires_grad or b_coeffs.requires_grad:
        raise NotImplementedError("ember.audio lfilter: gradients with respect to the filter "
                                  "coefficients are not implemented (only the waveform)")
    squeeze = a_coeffs.dim() == 1
    if not squeeze:
        if batching:
            if waveform.dim() < 2 or waveform.shape[-2] != a_coeffs.shape[0]:
                raise ValueError(f"Expected number of batches in waveform and coeffs to be the "
                                 f"same.Found: coeffs batches: {a_coeffs.shape[0]}, waveform "
                                 f"batches: {waveform.shape[-2] if waveform.dim() > 1 else 0}")
        else:
            waveform = ember.stack([waveform] * a_coeffs.shape[0], -2)
    a = a_coeffs.detach().numpy().astype(np.float64).reshape(-1, a_coeffs.shape[-1])
    b = b_coeffs.detach().numpy().astype(np.float64).reshape(-1, b_coeffs.shape[-1])
    b, a = b / a[:, :1], a / a[:, :1]
    shape = tuple(waveform.shape)
    x = waveform.reshape(-1, a.shape[0], shape[-1]) if not squeeze else waveform.reshape(
        -1, 1, shape[-1])
    out = _LFilter.apply(x, b, a)
    if clamp:
        out = ember.clamp(out, min=-1.0, max=1.0)
    return out.reshape(shape)


def filtfilt(waveform, a_coeffs, b_coeffs, clamp=True):
    """Forward-backward (zero-phase) filtering, torchaudio's definition (no edge padding)."""
    fwd = lfilter(waveform, a_coeffs, b_coeffs, clamp=False, batching=True)
    return lfilter(fwd.flip(-1), a_coeffs, b_coeffs, clamp=clamp, batching=True).flip(-1)


def biquad(waveform, b0, b1, b2, a0, a1, a2):
    """Second-order IIR section with the given coefficients."""
    coeff = lambda v: float(v)
    dtype = waveform.dtype
    a = ember.tensor([coeff(a0), coeff(a1), coeff(a2)], dtype=dtype)
    b = ember.tensor([coeff(b0), coeff(b1), coeff(b2)], dtype=dtype)
    return lfilter(waveform, a, b)


def _w0_alpha(sample_rate, freq, Q):
    w0 = 2 * math.pi * float(freq) / sample_rate
    return w0, math.sin(w0) / 2 / float(Q)


def lowpass_biquad(waveform, sample_rate, cutoff_freq, Q=0.707):
    """Two-pole Butterworth-style lowpass (sox `lowpass`)."""
    w0, alpha = _w0_alpha(sample_rate, cutoff_freq, Q)
    b0 = (1 - math.cos(w0)) / 2
    return biquad(waveform, b0, 1 - math.cos(w0), b0, 1 + alpha, -2 * math.cos(w0), 1 - alpha)


def highpass_biquad(waveform, sample_rate, cutoff_freq, Q=0.707):
    """Two-pole highpass (sox `highpass`)."""
    w0, alpha = _w0_alpha(sample_rate, cutoff_freq, Q)
    b0 = (1 + math.cos(w0)) / 2
    return biquad(waveform, b0, -1 - math.cos(w0), b0, 1 + alpha, -2 * math.cos(w0), 1 - alpha)


def allpass_biquad(waveform, sample_rate, central_freq, Q=0.707):
    """Two-pole allpass (sox `allpass`)."""
    w0, alpha = _w0_alpha(sample_rate, central_freq, Q)
    c = -2 * math.cos(w0)
    return biquad(waveform, 1 - alpha, c, 1 + alpha, 1 + alpha, c, 1 - alpha)


def bandpass_biquad(waveform, sample_rate, central_freq, Q=0.707, const_skirt_gain=False):
    """Two-pole bandpass (sox `bandpass`, -c for constant skirt gain)."""
    w0, alpha = _w0_alpha(sample_rate, central_freq, Q)
    temp = math.sin(w0) / 2 if const_skirt_gain else alpha
    return biquad(waveform, temp, 0.0, -temp, 1 + alpha, -2 * math.cos(w0), 1 - alpha)


def bandreject_biquad(waveform, sample_rate, central_freq, Q=0.707):
    """Two-pole band-reject (sox `bandreject`)."""
    w0, alpha = _w0_alpha(sample_rate, central_freq, Q)
    c = -2 * math.cos(w0)
    return biquad(waveform, 1.0, c, 1.0, 1 + alpha, c, 1 - alpha)


def band_biquad(waveform, sample_rate, central_freq, Q=0.707, noise=False):
    """Two-pole resonator band filter (sox `band`)."""
    w0 = 2 * math.pi * float(central_freq) / sample_rate
    bw_hz = float(central_freq) / float(Q)
    a2 = math.exp(-2 * math.pi * bw_hz / sample_rate)
    a1 = -4 * a2 / (1 + a2) * math.cos(w0)
    b0 = math.sqrt(1 - a1 * a1 / (4 * a2)) * (1 - a2)
    if noise:
        b0 *= math.sqrt(((1 + a2) * (1 + a2) - a1 * a1) * (1 - a2) / (1 + a2)) / b0
    return biquad(waveform, b0, 0.0, 0.0, 1.0, a1, a2)


def equalizer_biquad(waveform, sample_rate, center_freq, gain, Q=0.707):
    """Peaking EQ of `gain` dB at center_freq (sox `equalizer`)."""
    w0, alpha = _w0_alpha(sample_rate, center_freq, Q)
    A = math.exp(float(gain) / 40.0 * math.log(10))
    c = -2 * math.cos(w0)
    return biquad(waveform, 1 + alpha * A, c, 1 - alpha * A, 1 + alpha / A, c, 1 - alpha / A)


def _shelf(waveform, sample_rate, gain, central_freq, Q, sign):
    w0, alpha = _w0_alpha(sample_rate, central_freq, Q)
    A = math.exp(float(gain) / 40 * math.log(10))
    c, s = math.cos(w0), sign
    t = 2 * math.sqrt(A) * alpha
    b0 = A * ((A + 1) - s * (A - 1) * c + t)
    b1 = s * 2 * A * ((A - 1) - s * (A + 1) * c)
    b2 = A * ((A + 1) - s * (A - 1) * c - t)
    a0 = (A + 1) + s * (A - 1) * c + t
    a1 = -s * 2 * ((A - 1) + s * (A + 1) * c)
    a2 = (A + 1) + s * (A - 1) * c - t
    return biquad(waveform, b0, b1, b2, a0, a1, a2)


def bass_biquad(waveform, sample_rate, gain, central_freq=100, Q=0.707):
    """Low shelf of `gain` dB (sox `bass`)."""
    return _shelf(waveform, sample_rate, gain, central_freq, Q, 1)


def treble_biquad(waveform, sample_rate, gain, central_freq=3000, Q=0.707):
    """High shelf of `gain` dB (sox `treble`)."""
    return _shelf(waveform, sample_rate, gain, central_freq, Q, -1)


def gain(waveform, gain_db=1.0):
    """Amplify by gain_db decibels (no clipping)."""
    return waveform if gain_db == 0 else waveform * (10 ** (gain_db / 20))


def dcshift(waveform, shift, limiter_gain=None):
    """Add a DC offset, clamped to [-1, 1] (optionally through sox's limiter)."""
    if limiter_gain is None or shift == 0:
        return (waveform + shift).clamp(min=-1, max=1)
    thr = 1.0 - (abs(shift) - limiter_gain)
    if shift > 0:
        mask = waveform > thr
        lim = ((waveform - thr) * limiter_gain / (1 - thr) + thr + shift).clamp(max=thr)
    else:
        mask = waveform < -thr
        lim = ((waveform + thr) * limiter_gain / (1 - thr) - thr + shift).clamp(min=-thr)
    return ember.where(mask, lim, (waveform + shift).clamp(min=-1, max=1))


def contrast(waveform, enhancement_amount=75.0):
    """sox `contrast`: a sine-based loudness compressor."""
    if not 0 <= enhancement_amount <= 100:
        raise ValueError("Allowed range of values for enhancement_amount : 0-100")
    temp1 = waveform * (math.pi / 2)
    return ember.sin(temp1 + enhancement_amount / 750.0 * ember.sin(temp1 * 4))


def preemphasis(waveform, coeff=0.97):
    """y[n] = x[n] - coeff * x[n-1]."""
    return ember.cat([waveform[..., :1], waveform[..., 1:] - coeff * waveform[..., :-1]], -1)


def deemphasis(waveform, coeff=0.97):
    """Inverse of preemphasis: y[n] = x[n] + coeff * y[n-1] (clamped, as torchaudio)."""
    a = ember.tensor([1.0, -coeff], dtype=waveform.dtype)
    b = ember.tensor([1.0, 0.0], dtype=waveform.dtype)
    return lfilter(waveform, a_coeffs=a, b_coeffs=b)
