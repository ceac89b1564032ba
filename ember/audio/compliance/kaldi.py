"""torchaudio.compliance.kaldi: Kaldi-compatible spectrogram / fbank / mfcc features
(compute-fbank-feats semantics: povey window, pre-emphasis, DC removal, log energies)."""
import math

import ember
import ember.nn.functional as F
from ..functional import create_dct

__all__ = ["get_mel_banks", "inverse_mel_scale", "inverse_mel_scale_scalar", "mel_scale",
           "mel_scale_scalar", "spectrogram", "fbank", "mfcc", "vtln_warp_freq",
           "vtln_warp_mel_freq"]

MILLISECONDS_TO_SECONDS = 0.001
HAMMING, HANNING, POVEY, RECTANGULAR, BLACKMAN = ("hamming", "hanning", "povey",
                                                  "rectangular", "blackman")
WINDOWS = [HAMMING, HANNING, POVEY, RECTANGULAR, BLACKMAN]


def _eps(dtype):
    return ember.tensor(ember.finfo(ember.float32).eps, dtype=dtype)


def _next_power_of_2(x):
    return 1 if x == 0 else 2 ** (x - 1).bit_length()


def _get_strided(waveform, window_size, window_shift, snip_edges):
    n = waveform.shape[0]
    if snip_edges:
        if n < window_size:
            return ember.empty((0, 0), dtype=waveform.dtype)
        m = 1 + (n - window_size) // window_shift
    else:
        rev = ember.flip(waveform, [0])
        m = (n + window_shift // 2) // window_shift
        pad = window_size // 2 - window_shift // 2
        if pad > 0:
            waveform = ember.cat((rev[-pad:], waveform, rev), dim=0)
        else:
            waveform = ember.cat((waveform[-pad:], rev), dim=0)
    # unfold is the same view as torch's as_strided here; ember's as_strided backward does not
    # accumulate overlapping windows yet, unfold's does
    return waveform[:(m - 1) * window_shift + window_size].unfold(0, window_size, window_shift)


def _feature_window_function(window_type, window_size, blackman_coeff, dtype):
    if window_type == HANNING:
        return ember.hann_window(window_size, periodic=False, dtype=dtype)
    if window_type == HAMMING:
        return ember.hamming_window(window_size, periodic=False, alpha=0.54, beta=0.46,
                                    dtype=dtype)
    if window_type == POVEY:
        return ember.hann_window(window_size, periodic=False, dtype=dtype).pow(0.85)
    if window_type == RECTANGULAR:
        return ember.ones(window_size, dtype=dtype)
    if window_type == BLACKMAN:
        a = 2 * math.pi / (window_size - 1)
        n = ember.arange(window_size, dtype=dtype)
        return (blackman_coeff - 0.5 * ember.cos(a * n)
                + (0.5 - blackman_coeff) * ember.cos(2 * a * n))
    raise Exception("Invalid window type " + window_type)


def _get_log_energy(strided, eps, energy_floor):
    log_energy = ember.max(strided.pow(2).sum(1), eps).log()
    if energy_floor == 0.0:
        return log_energy
    return ember.max(log_energy, ember.tensor(math.log(energy_floor), dtype=strided.dtype))


def _properties(waveform, channel, sample_frequency, frame_shift, frame_length,
                round_to_power_of_two, preemphasis_coefficient):
    channel = max(channel, 0)
    assert channel < waveform.shape[0], f"Invalid channel {channel} for size {waveform.shape[0]}"
    waveform = waveform[channel, :]
    window_shift = int(sample_frequency * frame_shift * MILLISECONDS_TO_SECONDS)
    window_size = int(sample_frequency * frame_length * MILLISECONDS_TO_SECONDS)
    padded = _next_power_of_2(window_size) if round_to_power_of_two else window_size
    assert 2 <= window_size <= len(waveform), (f"choose a window size {window_size} that is "
                                               f"[2, {len(waveform)}]")
    assert 0 < window_shift, "`window_shift` must be greater than 0"
    assert padded % 2 == 0, ("the padded `window_size` must be divisible by two. use "
                             "`round_to_power_of_two` or change `frame_length`")
    assert 0.0 <= preemphasis_coefficient <= 1.0, ("`preemphasis_coefficient` must be between "
                                                   "[0,1]")
    assert sample_frequency > 0, "`sample_frequency` must be greater than zero"
    return waveform, window_shift, window_size, padded


def _get_window(waveform, padded, window_size, window_shift, window_type, blackman_coeff,
                snip_edges, raw_energy, energy_floor, dither, remove_dc_offset,
                preemphasis_coefficient):
    dtype = waveform.dtype
    eps = _eps(dtype)
    x = _get_strided(waveform, window_size, window_shift, snip_edges)
    if dither != 0.0:
        x = x + ember.randn(tuple(x.shape), dtype=dtype) * dither
    if remove_dc_offset:
        x = x - ember.mean(x, dim=1).unsqueeze(1)
    if raw_energy:
        log_energy = _get_log_energy(x, eps, energy_floor)
    if preemphasis_coefficient != 0.0:
        shifted = F.pad(x.unsqueeze(0), (1, 0), mode="replicate").squeeze(0)
        x = x - preemphasis_coefficient * shifted[:, :-1]
    x = x * _feature_window_function(window_type, window_size, blackman_coeff,
                                     dtype).unsqueeze(0)
    if padded != window_size:
        x = F.pad(x.unsqueeze(0), (0, padded - window_size), mode="constant", value=0).squeeze(0)
    if not raw_energy:
        log_energy = _get_log_energy(x, eps, energy_floor)
    return x, log_energy


def _subtract_column_mean(t, subtract_mean):
    return t - ember.mean(t, dim=0).unsqueeze(0) if subtract_mean else t


def spectrogram(waveform, blackman_coeff=0.42, channel=-1, dither=0.0, energy_floor=1.0,
                frame_length=25.0, frame_shift=10.0, min_duration=0.0,
                preemphasis_coefficient=0.97, raw_energy=True, remove_dc_offset=True,
                round_to_power_of_two=True, sample_frequency=16000.0, snip_edges=True,
                subtract_mean=False, window_type=POVEY):
    """Kaldi compute-spectrogram-feats: (frames, padded_window // 2 + 1) log power."""
    dtype = waveform.dtype
    wav, shift, size, padded = _properties(waveform, channel, sample_frequency, frame_shift,
                                           frame_length, round_to_power_of_two,
                                           preemphasis_coefficient)
    if len(wav) < min_duration * sample_frequency:
        return ember.empty(0)
    x, log_energy = _get_window(wav, padded, size, shift, window_type, blackman_coeff,
                                snip_edges, raw_energy, energy_floor, dither,
                                remove_dc_offset, preemphasis_coefficient)
    power = ember.max(ember.fft.rfft(x).abs().pow(2.0), _eps(dtype)).log()
    power = ember.cat([log_energy.unsqueeze(1), power[:, 1:]], dim=1)
    return _subtract_column_mean(power, subtract_mean)


def inverse_mel_scale_scalar(mel_freq):
    return 700.0 * (math.exp(mel_freq / 1127.0) - 1.0)


def inverse_mel_scale(mel_freq):
    return 700.0 * ((mel_freq / 1127.0).exp() - 1.0)


def mel_scale_scalar(freq):
    return 1127.0 * math.log(1.0 + freq / 700.0)


def mel_scale(freq):
    return 1127.0 * (1.0 + freq / 700.0).log()


def vtln_warp_freq(vtln_low_cutoff, vtln_high_cutoff, low_freq, high_freq, vtln_warp_factor,
                   freq):
    """Piecewise-linear vocal tract length normalisation of frequencies (Kaldi's)."""
    assert vtln_low_cutoff > low_freq, "be sure to set the vtln_low option higher than low_freq"
    assert vtln_high_cutoff < high_freq, ("be sure to set the vtln_high option lower than "
                                          "high_freq [or negative]")
    lo = vtln_low_cutoff * max(1.0, vtln_warp_factor)
    hi = vtln_high_cutoff * min(1.0, vtln_warp_factor)
    scale = 1.0 / vtln_warp_factor
    fl, fh = scale * lo, scale * hi
    assert lo > low_freq and hi < high_freq
    scale_left = (fl - low_freq) / (lo - low_freq)
    scale_right = (high_freq - fh) / (high_freq - hi)
    res = high_freq + scale_right * (freq - high_freq)
    res = ember.where(freq < hi, scale * freq, res)
    res = ember.where(freq < lo, low_freq + scale_left * (freq - low_freq), res)
    return ember.where((freq < low_freq) | (freq > high_freq), freq, res)


def vtln_warp_mel_freq(vtln_low_cutoff, vtln_high_cutoff, low_freq, high_freq,
                       vtln_warp_factor, mel_freq):
    return mel_scale(vtln_warp_freq(vtln_low_cutoff, vtln_high_cutoff, low_freq, high_freq,
                                    vtln_warp_factor, inverse_mel_scale(mel_freq)))


def get_mel_banks(num_bins, window_length_padded, sample_freq, low_freq, high_freq, vtln_low,
                  vtln_high, vtln_warp_factor):
    """(bins (num_bins, padded // 2), center_freqs (num_bins,)) of Kaldi's mel filters."""
    assert num_bins > 3, "Must have at least 3 mel bins"
    assert window_length_padded % 2 == 0
    num_fft_bins = window_length_padded // 2
    nyquist = 0.5 * sample_freq
    if high_freq <= 0.0:
        high_freq += nyquist
    assert 0.0 <= low_freq < nyquist and 0.0 < high_freq <= nyquist and low_freq < high_freq, (
        f"Bad values in options: low-freq {low_freq} and high-freq {high_freq} vs. nyquist "
        f"{nyquist}")
    fft_bin_width = sample_freq / window_length_padded
    mel_low, mel_high = mel_scale_scalar(low_freq), mel_scale_scalar(high_freq)
    delta = (mel_high - mel_low) / (num_bins + 1)
    if vtln_high < 0.0:
        vtln_high += nyquist
    assert vtln_warp_factor == 1.0 or (low_freq < vtln_low < high_freq
                                       and 0.0 < vtln_high < high_freq
                                       and vtln_low < vtln_high), (
        f"Bad values in options: vtln-low {vtln_low} and vtln-high {vtln_high}, versus "
        f"low-freq {low_freq} and high-freq {high_freq}")
    b = ember.arange(num_bins).unsqueeze(1)
    left = mel_low + b * delta
    center = mel_low + (b + 1.0) * delta
    right = mel_low + (b + 2.0) * delta
    if vtln_warp_factor != 1.0:
        warp = lambda m: vtln_warp_mel_freq(vtln_low, vtln_high, low_freq, high_freq,
                                            vtln_warp_factor, m)
        left, center, right = warp(left), warp(center), warp(right)
    center_freqs = inverse_mel_scale(center)
    mel = mel_scale(fft_bin_width * ember.arange(num_fft_bins)).unsqueeze(0)
    up = (mel - left) / (center - left)
    down = (right - mel) / (right - center)
    if vtln_warp_factor == 1.0:
        bins = ember.clamp(ember.min(up, down), min=0.0)
    else:
        zero = ember.zeros_like(up)
        bins = ember.where((mel > left) & (mel <= center), up, zero)
        bins = ember.where((mel > center) & (mel < right), down, bins)
    return bins, center_freqs


def fbank(waveform, blackman_coeff=0.42, channel=-1, dither=0.0, energy_floor=1.0,
          frame_length=25.0, frame_shift=10.0, high_freq=0.0, htk_compat=False, low_freq=20.0,
          min_duration=0.0, num_mel_bins=23, preemphasis_coefficient=0.97, raw_energy=True,
          remove_dc_offset=True, round_to_power_of_two=True, sample_frequency=16000.0,
          snip_edges=True, subtract_mean=False, use_energy=False, use_log_fbank=True,
          use_power=True, vtln_high=-500.0, vtln_low=100.0, vtln_warp=1.0, window_type=POVEY):
    """Kaldi compute-fbank-feats: (frames, num_mel_bins [+1 energy]) log mel energies."""
    dtype = waveform.dtype
    wav, shift, size, padded = _properties(waveform, channel, sample_frequency, frame_shift,
                                           frame_length, round_to_power_of_two,
                                           preemphasis_coefficient)
    if len(wav) < min_duration * sample_frequency:
        return ember.empty(0, dtype=dtype)
    x, log_energy = _get_window(wav, padded, size, shift, window_type, blackman_coeff,
                                snip_edges, raw_energy, energy_floor, dither,
                                remove_dc_offset, preemphasis_coefficient)
    spectrum = ember.fft.rfft(x).abs()
    if use_power:
        spectrum = spectrum.pow(2.0)
    banks, _ = get_mel_banks(num_mel_bins, padded, sample_frequency, low_freq, high_freq,
                             vtln_low, vtln_high, vtln_warp)
    banks = F.pad(banks.to(dtype), (0, 1), mode="constant", value=0)
    mel = ember.mm(spectrum, banks.T)
    if use_log_fbank:
        mel = ember.max(mel, _eps(dtype)).log()
    if use_energy:
        e = log_energy.unsqueeze(1)
        mel = ember.cat((mel, e) if htk_compat else (e, mel), dim=1)
    return _subtract_column_mean(mel, subtract_mean)


def _get_dct_matrix(num_ceps, num_mel_bins):
    dct = create_dct(num_mel_bins, num_mel_bins, "ortho")
    first = ember.full((num_mel_bins, 1), math.sqrt(1 / float(num_mel_bins)), dtype=dct.dtype)
    return ember.cat([first, dct[:, 1:]], dim=1)[:, :num_ceps]


def _get_lifter_coeffs(num_ceps, cepstral_lifter):
    i = ember.arange(num_ceps)
    return 1.0 + 0.5 * cepstral_lifter * ember.sin(math.pi * i / cepstral_lifter)


def mfcc(waveform, blackman_coeff=0.42, cepstral_lifter=22.0, channel=-1, dither=0.0,
         energy_floor=1.0, frame_length=25.0, frame_shift=10.0, high_freq=0.0,
         htk_compat=False, low_freq=20.0, num_ceps=13, min_duration=0.0, num_mel_bins=23,
         preemphasis_coefficient=0.97, raw_energy=True, remove_dc_offset=True,
         round_to_power_of_two=True, sample_frequency=16000.0, snip_edges=True,
         subtract_mean=False, use_energy=False, vtln_high=-500.0, vtln_low=100.0,
         vtln_warp=1.0, window_type=POVEY):
    """Kaldi compute-mfcc-feats: (frames, num_ceps) liftered cepstra."""
    assert num_ceps <= num_mel_bins, (f"num_ceps cannot be larger than num_mel_bins: "
                                      f"{num_ceps} vs {num_mel_bins}")
    dtype = waveform.dtype
    feat = fbank(waveform=waveform, blackman_coeff=blackman_coeff, channel=channel,
                 dither=dither, energy_floor=energy_floor, frame_length=frame_length,
                 frame_shift=frame_shift, high_freq=high_freq, htk_compat=htk_compat,
                 low_freq=low_freq, min_duration=min_duration, num_mel_bins=num_mel_bins,
                 preemphasis_coefficient=preemphasis_coefficient, raw_energy=raw_energy,
                 remove_dc_offset=remove_dc_offset,
                 round_to_power_of_two=round_to_power_of_two,
                 sample_frequency=sample_frequency, snip_edges=snip_edges,
                 subtract_mean=False, use_energy=use_energy, use_log_fbank=True,
                 use_power=True, vtln_high=vtln_high, vtln_low=vtln_low, vtln_warp=vtln_warp,
                 window_type=window_type)
    if use_energy:
        energy = feat[:, num_mel_bins if htk_compat else 0]
        offset = int(not htk_compat)
        feat = feat[:, offset:num_mel_bins + offset]
    feat = feat.matmul(_get_dct_matrix(num_ceps, num_mel_bins).to(dtype))
    if cepstral_lifter != 0.0:
        feat = feat * _get_lifter_coeffs(num_ceps, cepstral_lifter).unsqueeze(0).to(dtype)
    if use_energy:
        feat = ember.cat([energy.unsqueeze(1), feat[:, 1:]], dim=1)
    if htk_compat:
        first = feat[:, 0].unsqueeze(1)
        if not use_energy:
            first = first * math.sqrt(2)
        feat = ember.cat((feat[:, 1:], first), dim=1)
    return _subtract_column_mean(feat, subtract_mean)
