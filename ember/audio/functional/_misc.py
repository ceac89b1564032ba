"""torchaudio.functional's convolutions, noise mixing and edit distance."""
import ember
import ember.nn.functional as F

__all__ = ["convolve", "fftconvolve", "add_noise", "edit_distance"]

_MODES = ["full", "valid", "same"]


def _check(x, y, mode):
    if x.dim() != y.dim():
        raise ValueError(f"The operands must be the same dimension (got {x.dim()} and "
                         f"{y.dim()}).")
    for xi, yi in zip(x.shape[:-1], y.shape[:-1]):
        if not (xi == yi or xi == 1 or yi == 1):
            raise ValueError(f"Leading dimensions of x and y are not broadcastable (got "
                             f"{tuple(x.shape)} and {tuple(y.shape)}).")
    if mode not in _MODES:
        raise ValueError(f"Unrecognized mode value '{mode}'. Please specify one of {_MODES}.")


def _apply_mode(result, x_length, y_length, mode):
    if mode == "full":
        return result
    target = (max(x_length, y_length) - min(x_length, y_length) + 1 if mode == "valid"
              else x_length)
    start = (result.shape[-1] - target) // 2
    return result[..., start:start + target]


def fftconvolve(x, y, mode="full"):
    """Linear convolution along the last dim through the FFT (leading dims broadcast)."""
    _check(x, y, mode)
    n = x.shape[-1] + y.shape[-1] - 1
    result = ember.fft.irfft(ember.fft.rfft(x, n=n) * ember.fft.rfft(y, n=n), n=n)
    return _apply_mode(result, x.shape[-1], y.shape[-1], mode)


def convolve(x, y, mode="full"):
    """Linear convolution along the last dim (direct, grouped conv1d)."""
    _check(x, y, mode)
    x_size, y_size = x.shape[-1], y.shape[-1]
    if x_size < y_size:
        x, y = y, x
    lead = [max(i, j) for i, j in zip(x.shape[:-1], y.shape[:-1])]
    x = x.broadcast_to(tuple(lead) + (x.shape[-1],)).reshape(-1, x.shape[-1])
    y = y.broadcast_to(tuple(lead) + (y.shape[-1],)).reshape(-1, y.shape[-1])
    out = F.conv1d(x, y.flip(-1).unsqueeze(1), stride=1, groups=x.shape[0],
                   padding=y.shape[-1] - 1)
    return _apply_mode(out.reshape(tuple(lead) + (-1,)), x_size, y_size, mode)


def add_noise(waveform, noise, snr, lengths=None):
    """waveform + noise scaled so that the signal-to-noise ratio is `snr` dB."""
    if not (waveform.dim() - 1 == noise.dim() - 1 == snr.dim()
            and (lengths is None or lengths.dim() == snr.dim())):
        raise ValueError("Input leading dimensions don't match.")
    L = waveform.shape[-1]
    if L != noise.shape[-1]:
        raise ValueError(f"Length dimensions of waveform and noise don't match (got {L} and "
                         f"{noise.shape[-1]}).")
    if lengths is not None:
        mask = ember.arange(0, L).expand(tuple(waveform.shape)) < lengths.unsqueeze(-1)
        masked_wave, masked_noise = waveform * mask, noise * mask
    else:
        masked_wave, masked_noise = waveform, noise
    energy_signal = ember.linalg.vector_norm(masked_wave, ord=2, dim=-1) ** 2
    energy_noise = ember.linalg.vector_norm(masked_noise, ord=2, dim=-1) ** 2
    original_snr_db = 10 * (ember.log10(energy_signal) - ember.log10(energy_noise))
    scale = 10 ** ((original_snr_db - snr) / 20.0)
    return waveform + scale.unsqueeze(-1) * noise


def edit_distance(seq1, seq2):
    """Levenshtein distance between two sequences (words, tokens or characters)."""
    dold = list(range(len(seq2) + 1))
    dnew = [0] * (len(seq2) + 1)
    for i in range(1, len(seq1) + 1):
        dnew[0] = i
        for j in range(1, len(seq2) + 1):
            if seq1[i - 1] == seq2[j - 1]:
                dnew[j] = dold[j - 1]
            else:
                dnew[j] = min(dold[j - 1] + 1, dnew[j - 1] + 1, dold[j] + 1)
        dnew, dold = dold, dnew
    return int(dold[-1])
