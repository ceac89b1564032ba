"""F.interpolate(..., antialias=True) for bilinear and bicubic 4-d input.

Note: PyTorch's _upsample_{bilinear,bicubic}2d_aa (UpSampleKernel.cpp): per axis and
output index i, with scale = in / out (or (in - 1) / (out - 1) with align_corners, or
1 / scale_factor when given), center = scale * (i + 0.5), support = interp_size / 2 *
max(scale, 1) (interp_size 2: triangle filter, 4: Keys cubic a = -0.5), the input
indices [int(center - support + 0.5), int(center + support + 0.5)) clipped to the input
get filter((j - center + 0.5) / max(scale, 1)), normalised to sum 1. Each axis is one
(out, in) matrix applied with matmul, so the result is differentiable.
"""
import numpy as np

__all__ = []


def _triangle(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def aa_weights(in_size, out_size, mode, align_corners, scale_factor, np_dtype=np.float64):
    """The (out_size, in_size) antialiasing matrix of one axis, computed in the input's
    float type as PyTorch's kernel does (the window bounds truncate in that precision)."""
    f = np.dtype(np_dtype).type
    filt, interp_size = (_triangle, 2) if mode == "bilinear" else (_keys_cubic, 4)
    if align_corners:
        scale = f((in_size - 1) / (out_size - 1)) if out_size > 1 else f(0)
    elif scale_factor is not None and scale_factor > 0:
        scale = f(1.0 / scale_factor)
    else:
        scale = f(in_size / out_size)
    half = f(interp_size * 0.5)
    support = half * scale if scale >= 1 else half
    invscale = f(1) / scale if scale >= 1 else f(1)
    max_taps = int(np.ceil(support)) * 2 + 1
    w = np.zeros((out_size, in_size), np_dtype)
    for i in range(out_size):
        center = scale * f(i + 0.5)
        xmin = max(int(center - support + f(0.5)), 0)
        xsize = min(max(min(int(center + support + f(0.5)), in_size) - xmin, 0), max_taps)
        j = np.arange(xmin, xmin + xsize).astype(np_dtype)
        row = filt((j - center + f(0.5)) * invscale).astype(np_dtype)
        total = row.sum(dtype=np_dtype)
        w[i, xmin:xmin + xsize] = row / total if total != 0 else row
    return w


def interpolate_aa(input, output_size, mode, align_corners, scales):
    """Antialiased resize of a 4-d (N, C, H, W) float tensor to output_size (h, w)."""
    from .creation import tensor
    y = input.float() if input.dtype.itemsize == 2 else input
    finite = y._backend == "meta" or bool(y.detach().isfinite().all())   # fake: no data
    for k in range(2):
        dim = 2 + k
        m = aa_weights(y.shape[dim], output_size[k], mode, bool(align_corners),
                       scales[k] if scales else None, y.dtype.np)
        if finite:                                   # one BLAS product per axis
            y = (y.movedim(dim, -1) @ tensor(m.T, dtype=y.dtype)).movedim(-1, dim)
            continue
        acc = None                                   # only the taps: no 0 * inf
        shape = [m.shape[0]] + [1] * (y.dim() - dim - 1)
        for j in np.nonzero(m.any(0))[0]:
            rows = m[:, j]
            col = y.narrow(dim, int(j), 1)
            term = col * tensor(rows, dtype=y.dtype).reshape(shape)
            term = term.masked_fill(tensor(rows == 0).reshape(shape), 0)
            acc = term if acc is None else acc + term
        y = acc
    return y.to(input.dtype)
