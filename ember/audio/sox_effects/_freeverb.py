"""sox's `reverb` (libSoX reverb.c, a Freeverb variant): 8 lowpass-feedback combs in
parallel, then 4 allpasses in series, per wet channel; each delay line is a linear filter,
so it runs as scipy.signal.lfilter with the same delay lengths and coefficients."""
import math

import numpy as np
import scipy.signal

_COMB = (1116, 1188, 1277, 1356, 1422, 1491, 1557, 1617)
_ALLPASS = (225, 341, 441, 556)
_STEREO_ADJUST = 12


def _comb(x, size, feedback, damping):
    # out[n] = w[n-N]; w = x + feedback * s; s[n] = out[n] + (s[n-1] - out[n]) * damping
    b = np.zeros(size + 2)
    b[size], b[size + 1] = 1.0, -damping
    a = np.zeros(size + 1)
    a[0], a[1] = 1.0, -damping
    a[size] += -feedback * (1 - damping)
    return scipy.signal.lfilter(b, a, x)


def _allpass(x, size):
    # out[n] = v[n-N] - x[n]; v = x + 0.5 * v[n-N]
    b = np.zeros(size + 1)
    b[0], b[size] = -1.0, 1.5
    a = np.zeros(size + 1)
    a[0], a[size] = 1.0, -0.5
    return scipy.signal.lfilter(b, a, x)


def _wet(x, rate, scale, offset, feedback, damping, gain):
    r = rate / 44100.0
    out = np.zeros_like(x)
    for n in _COMB:
        out += _comb(x, int(scale * r * (n + _STEREO_ADJUST * offset) + 0.5), feedback, damping)
        offset = -offset
    for n in _ALLPASS:
        out = _allpass(out, int(r * (n + _STEREO_ADJUST * offset) + 0.5))
        offset = -offset
    return out * gain


def reverb(x, rate, reverberance=50.0, hf_damping=50.0, room_scale=100.0, stereo_depth=100.0,
           pre_delay_ms=0.0, wet_gain_db=0.0, wet_only=False):
    """x: (channels, frames) float64 -> (channels', frames); mono becomes stereo when
    stereo_depth > 0, as in sox."""
    channels = x.shape[0]
    if channels > 2:
        stereo_depth = 0.0
    scale = room_scale / 100 * 0.9 + 0.1
    depth = stereo_depth / 100
    a = -1 / math.log(1 - 0.3)
    b = 100 / (math.log(1 - 0.98) * a + 1)
    feedback = 1 - math.exp((reverberance - b) / (a * b))
    damping = hf_damping / 100 * 0.3 + 0.2
    gain = 10 ** (wet_gain_db / 20) * 0.015
    delay = int(pre_delay_ms / 1000 * rate + 0.5)
    n_wet = 2 if depth else 1

    def wets(sig):
        delayed = np.concatenate([np.zeros(delay), sig])[:sig.shape[-1]]
        return [_wet(delayed, rate, scale, i * depth, feedback, damping, gain)
                for i in range(n_wet)]
    dry = 0.0 if wet_only else 1.0
    if channels == 2 and depth:
        w0, w1 = wets(x[0]), wets(x[1])
        return np.stack([dry * x[c] + 0.5 * (w0[c] + w1[c]) for c in range(2)])
    if channels == 1 and depth:
        w = wets(x[0])
        return np.stack([dry * x[0] + w[c] for c in range(2)])
    return np.stack([dry * x[c] + wets(x[c])[0] for c in range(channels)])
