"""Antialiased resize as two matrix products (PIL's and torch's `antialias=True` filters).

Why: tensor transforms resize [..., H, W] images of any rank, while F.interpolate's
antialias path takes 4-d input; the per-axis [out, in] filter matrices are the op's own
(ember.ops.antialias.aa_weights), cached here because transforms reuse a few sizes.
"""
import functools

from ... import tensor
from ...ops.antialias import aa_weights


@functools.lru_cache(maxsize=64)
def weights(in_size, out_size, mode):
    """[out_size, in_size] float64 resampling matrix (align_corners=False); cached, read-only."""
    w = aa_weights(in_size, out_size, mode, False, None)
    w.setflags(write=False)
    return w


def resize_aa(img, size, mode):
    """Resize a float [..., H, W] tensor to size (h, w) with antialiasing."""
    h, w = img.shape[-2], img.shape[-1]
    wh = tensor(weights(h, size[0], mode), dtype=img.dtype, device=img.device)
    ww = tensor(weights(w, size[1], mode).T.copy(), dtype=img.dtype, device=img.device)
    return wh @ img @ ww
