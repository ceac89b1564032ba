"""torch.functional's spectral pair: stft / istft, built from ember ops (so autograd flows).

Framing is `unfold` (a view), the transform is `ember.fft`, overlap-add in istft is
`index_add`; exposed as `ember.stft`/`ember.istft` and `Tensor.stft`/`Tensor.istft`.
"""
import warnings

import ember

__all__ = ["stft", "istft"]


def _window_for(window, n_fft, win_length, like, op):
    """The window zero-padded (centred) to n_fft, as torch does; rectangular if None."""
    win_length = n_fft if win_length is None else int(win_length)
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        window = ember.ones(win_length, dtype=like.real.dtype if like.is_complex()
                            else like.dtype)
    if window.dim() != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op}: expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {tuple(window.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = ember.nn.functional.pad(window, (left, n_fft - win_length - left))
    return window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """Short-time Fourier transform: (B?, L) -> (B?, n_fft//2+1 or n_fft, n_frames)."""
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and "
                "will further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.", UserWarning)
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor "
                           f"of shape {tuple(input.shape)}")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    hop_length = n_fft // 4 if hop_length is None else int(hop_length)
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if center:
        pad = n_fft // 2
        x = ember.nn.functional.pad(x.unsqueeze(1), (pad, pad), mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which "
                      "is known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.", UserWarning)
    win = _window_for(window, n_fft, win_length, x, "stft")
    frames = x.unfold(-1, n_fft, hop_length) * win          # (B, n_frames, n_fft)
    complex_in = x.is_complex() or win.is_complex()
    if onesided is None:
        onesided = not complex_in
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    spec = ember.fft.rfft(frames, n=n_fft) if onesided else ember.fft.fft(frames, n=n_fft)
    if normalized:
        spec = spec * (n_fft ** -0.5)
    spec = spec.transpose(-1, -2)
    if not batched:
        spec = spec.squeeze(0)
    return spec if return_complex else ember.view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of stft by windowed overlap-add, divided by the summed squared window."""
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, but got {input.dim()}D of shape {tuple(input.shape)}")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    hop_length = n_fft // 4 if hop_length is None else int(hop_length)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) "
                               f"of the input tensor to match n_fft / 2 + 1 when onesided="
                               f"True, but got {n_freq}")
        if return_complex:
            raise RuntimeError("istft: cannot have onesided output if window or input is "
                               "complex")
    elif n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of "
                           f"the input tensor to match n_fft when onesided=False, but got "
                           f"{n_freq}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.",
                      UserWarning)
    win = _window_for(window, n_fft, win_length, spec.real, "istft")
    if normalized:
        spec = spec * (n_fft ** 0.5)
    spec = spec.transpose(-1, -2)                           # (B, n_frames, n_freq)
    if onesided:
        frames = ember.fft.irfft(spec, n=n_fft)
    elif not return_complex:          # a real output: irfft of the first n_fft // 2 + 1
        frames = ember.fft.irfft(spec[..., :n_fft // 2 + 1], n=n_fft)   # bins (as aten)
    else:
        frames = ember.fft.ifft(spec, n=n_fft)
    frames = frames * win
    expected = n_fft + hop_length * (n_frames - 1)
    index = (ember.arange(n_frames).unsqueeze(1) * hop_length
             + ember.arange(n_fft).unsqueeze(0)).reshape(-1)
    batch = frames.shape[0]
    y = ember.zeros(batch, expected, dtype=frames.dtype).index_add(
        1, index, frames.reshape(batch, -1))
    env = ember.zeros(expected, dtype=win.dtype)        # aten: window.pow(2), complex too
    env = env.index_add(0, index, (win * win).repeat(n_frames))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + int(length)
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    y, env = y[:, start:end], env[start:end]
    if env.numel() and float(env.abs().min()) < 1e-11:
        raise RuntimeError("istft: window overlap add min: " + f"{float(env.abs().min())}"
                           + " (the window does not satisfy the NOLA condition)")
    y = y / env
    if length is not None and y.shape[-1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning)
        y = ember.nn.functional.pad(y, (0, int(length) - y.shape[-1]))
    return y if batched else y.squeeze(0)
