"""F.pad: constant, reflect, replicate and circular padding (torch.nn.functional.pad).

Note: as PyTorch's PadNd.cpp does, 'constant' is `constant_pad_nd` (any number of
dims, negative pads crop), 'reflect'/'replicate' are the reflection_pad/replication_pad
primitives over the last 1, 2 or 3 dims of a batched or unbatched input, and
'circular' is a composite: one index_select per padded dim with the wrapped indices.
"""
import numpy as np

from ... import _dtype as D
from ...ops.creation import tensor
from ...ops.pool import constant_pad_nd, index_pad

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _check_pad_ints(pad):
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    return [int(p) for p in pad]


def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad)//2 dims of input: pad = (left_last, right_last, left_prev, ...)."""
    pad = _check_pad_ints(pad)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    ndim = input.dim()
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input of "
                           f"dimension {ndim}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    n = len(pad) // 2
    if n not in (1, 2, 3) or ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    return index_pad(input, pad, mode)


def _pad_circular(input, pad):
    """Negative pads crop first; then output index j of a padded dim reads index
    (j - left) mod size of the cropped input (PyTorch's _pad_circular)."""
    x = input
    for i in range(len(pad) // 2):
        dim = x.dim() - 1 - i
        left, right, size = pad[2 * i], pad[2 * i + 1], x.shape[dim]
        if left > size or right > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if size + left + right < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        lo, hi = max(-left, 0), size - max(-right, 0)
        m = max(hi - lo, 1)
        idx = lo + np.arange(-max(left, 0), hi - lo + max(right, 0)) % m
        x = x.index_select(dim, tensor(idx, dtype=D.int64))
    return x
