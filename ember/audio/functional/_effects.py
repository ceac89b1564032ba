"""More of torchaudio.functional: fixed de-emphasis/RIAA biquads, overdrive, sliding-window
CMN (Kaldi's apply-cmvn-sliding) and ITU-R BS.1770 loudness."""
import math

import numpy as np

import ember
import ember.nn.functional as F
from ._filtering import _LFilter, biquad, highpass_biquad, treble_biquad

__all__ = ["deemph_biquad", "riaa_biquad", "overdrive", "sliding_window_cmn", "loudness"]


def deemph_biquad(waveform, sample_rate):
    """CD (44.1k) / DAT (48k) de-emphasis: a high shelf, as sox `deemph`."""
    if sample_rate == 44100:
        central_freq, width_slope, gain = 5283, 0.4845, -9.477
    elif sample_rate == 48000:
        central_freq, width_slope, gain = 5356, 0.479, -9.62
    else:
        raise ValueError("Sample rate must be 44100 (audio-CD) or 48000 (DAT)")
    w0 = 2 * math.pi * central_freq / sample_rate
    A = math.exp(gain / 40.0 * math.log(10))
    alpha = math.sin(w0) / 2 * math.sqrt((A + 1 / A) * (1 / width_slope - 1) + 2)
    t1, t2, t3 = 2 * math.sqrt(A) * alpha, (A - 1) * math.cos(w0), (A + 1) * math.cos(w0)
    return biquad(waveform, A * (A + 1 + t2 + t1), -2 * A * (A - 1 + t3), A * (A + 1 + t2 - t1),
                  A + 1 - t2 + t1, 2 * (A - 1 - t3), A + 1 - t2 - t1)


_RIAA = {44100: ([-0.2014898, 0.923382], [0.7083149, 0.9924091]),
         48000: ([-0.1766069, 0.932159], [0.7396325, 0.993133]),
         88200: ([-0.1168735, 0.9648312], [0.8590646, 0.9964002]),
         96000: ([-0.1141486, 0.9676817], [0.8699137, 0.9966946])}


def riaa_biquad(waveform, sample_rate):
    """RIAA vinyl playback equalisation (sox `riaa`), unity gain at 1 kHz."""
    if sample_rate not in _RIAA:
        raise ValueError("Sample rate must be 44.1k, 48k, 88.2k, or 96k")
    zeros, poles = _RIAA[sample_rate]
    b = [1.0, -(zeros[0] + zeros[1]), zeros[0] * zeros[1]]
    a = [1.0, -(poles[0] + poles[1]), poles[0] * poles[1]]
    y = 2 * math.pi * 1000 / sample_rate
    b_re = b[0] + b[1] * math.cos(-y) + b[2] * math.cos(-2 * y)
    a_re = a[0] + a[1] * math.cos(-y) + a[2] * math.cos(-2 * y)
    b_im = b[1] * math.sin(-y) + b[2] * math.sin(-2 * y)
    a_im = a[1] * math.sin(-y) + a[2] * math.sin(-2 * y)
    g = 1 / math.sqrt((b_re ** 2 + b_im ** 2) / (a_re ** 2 + a_im ** 2))
    return biquad(waveform, b[0] * g, b[1] * g, b[2] * g, a[0], a[1], a[2])


def overdrive(waveform, gain=20, colour=20):
    """sox `overdrive`: soft cubic clipping then a DC-blocking one-pole highpass."""
    shape = tuple(waveform.shape)
    x = waveform.reshape(-1, shape[-1])
    temp = x * (10 ** (gain / 20)) + colour / 200
    cubic = temp - temp ** 3 * (1.0 / 3)
    temp = ember.where(temp < -1, ember.full_like(temp, -2.0 / 3.0),
                       ember.where(temp > 1, ember.full_like(temp, 2.0 / 3.0), cubic))
    # last_out[i] = temp[i] - temp[i-1] + 0.995 * last_out[i-1]
    dc_blocked = _LFilter.apply(temp.unsqueeze(1), np.array([[1.0, -1.0]]),
                                np.array([[1.0, -0.995]])).squeeze(1)
    return (x * 0.5 + dc_blocked * 0.75).clamp(min=-1, max=1).reshape(shape)


def _cmn_windows(num_frames, cmn_window, min_cmn_window, center):
    starts, ends = [], []
    for t in range(num_frames):
        if center:
            start = t - cmn_window // 2
            end = start + cmn_window
        else:
            start, end = t - cmn_window, t + 1
        if start < 0:
            end -= start
            start = 0
        if not center and end > t:
            end = max(t + 1, min_cmn_window)
        if end > num_frames:
            start -= end - num_frames
            end = num_frames
            start = max(start, 0)
        starts.append(start)
        ends.append(end)
    return starts, ends


def sliding_window_cmn(specgram, cmn_window=600, min_cmn_window=100, center=False,
                       norm_vars=False):
    """Subtract (and with norm_vars divide by the std of) a sliding window's mean per
    feature, windows chosen as Kaldi's apply-cmvn-sliding does. specgram: (..., time, feat)."""
    shape = tuple(specgram.shape)
    num_frames, num_feats = shape[-2:]
    dtype = specgram.dtype
    # window sums as differences of a cumulative sum: accumulate in float64 so that the
    # differences keep the precision of torchaudio's running sums
    x = specgram.reshape(-1, num_frames, num_feats).to(ember.float64)
    starts, ends = _cmn_windows(num_frames, cmn_window, min_cmn_window, center)
    s_idx, e_idx = ember.tensor(starts), ember.tensor(ends)
    counts = (e_idx - s_idx).to(x.dtype).reshape(1, -1, 1)
    cs = F.pad(ember.cumsum(x, 1), (0, 0, 1, 0))
    total = cs.index_select(1, e_idx) - cs.index_select(1, s_idx)
    out = x - total / counts
    if norm_vars:
        cs2 = F.pad(ember.cumsum(x ** 2, 1), (0, 0, 1, 0))
        total2 = cs2.index_select(1, e_idx) - cs2.index_select(1, s_idx)
        variance = total2 / counts - total ** 2 / counts ** 2
        out = ember.where(counts == 1, ember.zeros_like(out), out * variance.pow(-0.5))
    out = out.to(dtype).reshape(shape[:-2] + (num_frames, num_feats))
    return out.squeeze(0) if len(shape) == 2 else out


def loudness(waveform, sample_rate):
    """Integrated loudness in LKFS (ITU-R BS.1770-4): K-weighting, 400 ms gated blocks."""
    if waveform.shape[-2] > 5:
        raise ValueError("Only up to 5 channels are supported.")
    gate_samples = int(round(0.4 * sample_rate))
    step = int(round(gate_samples * (1 - 0.75)))
    x = treble_biquad(waveform, sample_rate, 4.0, 1500.0, 1 / math.sqrt(2))
    x = highpass_biquad(x, sample_rate, 38.0, 0.5)
    energy = (x * x).unfold(-1, gate_samples, step).mean(dim=-1)
    g = ember.tensor([1.0, 1.0, 1.0, 1.41, 1.41], dtype=x.dtype)[:energy.shape[-2]]
    block = -0.691 + 10 * ember.log10((g.unsqueeze(-1) * energy).sum(dim=-2))
    gated = (block > -70.0).unsqueeze(-2)

    def gated_energy(mask):
        return (g * ((mask * energy).sum(dim=-1) / ember.count_nonzero(mask, dim=-1))).sum(-1)
    gamma_rel = -0.691 + 10 * ember.log10(gated_energy(gated)) - 10
    gated = (gated.squeeze(-2) & (block > gamma_rel.unsqueeze(-1))).unsqueeze(-2)
    return -0.691 + 10 * ember.log10(gated_energy(gated))
