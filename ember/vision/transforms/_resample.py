"""Antialiased resize as two matrix products (PIL's and torch's `antialias=True` filters).

Why: ember's F.interpolate has no antialias; this builds, per axis, the [out, in] matrix of
normalised filter weights (triangle for bilinear, Keys cubic a=-0.5 for bicubic, support
widened by the downscale factor) and applies it with ember matmul, so it is differentiable.
"""
import functools

import numpy as np

from ... import tensor


def _bilinear(x):
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _bicubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


@functools.lru_cache(maxsize=64)
def weights(in_size, out_size, mode):
    """[out_size, in_size] float64 resampling matrix (align_corners=False); cached, read-only."""
    filt, interp_size = (_bilinear, 2) if mode == "bilinear" else (_bicubic, 4)
    scale = in_size / out_size
    support = interp_size * 0.5 * scale if scale >= 1.0 else interp_size * 0.5
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    w = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size)
        j = np.arange(xmin, xmax)
        row = filt((j - center + 0.5) * invscale)
        total = row.sum()
        w[i, xmin:xmax] = row / total if total != 0 else row
    w.setflags(write=False)
    return w


def resize_aa(img, size, mode):
    """Resize a float [..., H, W] tensor to size (h, w) with antialiasing."""
    h, w = img.shape[-2], img.shape[-1]
    wh = tensor(weights(h, size[0], mode), dtype=img.dtype, device=img.device)
    ww = tensor(weights(w, size[1], mode).T.copy(), dtype=img.dtype, device=img.device)
    return wh @ img @ ww
