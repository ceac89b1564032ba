"""RoIAlign (Mask R-CNN): average of bilinear samples per output bin, torchvision's CPU kernel.

Why this shape: sample positions and weights depend only on the boxes (no gradient flows to
boxes in torchvision either), so they are computed on the host; the gather and weighted sum
are ember ops, so the gradient reaches `input`.
"""
import math

import numpy as np

from ... import cat, full, nn, stack, tensor, zeros

__all__ = ["roi_align", "RoIAlign"]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _to_rois(boxes):
    """List[Tensor[L, 4]] -> Tensor[K, 5] with the batch index in column 0."""
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if b.dim() != 2 or b.shape[1] != 4:
                raise AssertionError("The shape of the tensor in the boxes list is not correct "
                                     "as List[Tensor[L, 4]]")
        parts = [cat([full((b.shape[0], 1), i, dtype=b.dtype, device=b.device), b], dim=1)
                 for i, b in enumerate(boxes)]
        return cat(parts, dim=0)
    if boxes.dim() != 2 or boxes.shape[1] != 5:
        raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
    return boxes


def _axis_samples(start, size, pooled, grid, extent):
    """Corner indices and weights along one axis: arrays [pooled, grid, 2]."""
    bin_size = size / pooled
    p = np.arange(pooled)[:, None]
    i = np.arange(grid)[None, :]
    pos = start + p * bin_size + (i + 0.5) * bin_size / grid
    valid = (pos >= -1.0) & (pos <= extent)
    pos = np.clip(pos, 0, None)
    low = np.floor(pos).astype(np.int64)
    at_end = low >= extent - 1
    low = np.where(at_end, extent - 1, low)
    high = np.where(at_end, extent - 1, low + 1)
    pos = np.where(at_end, low, pos)
    frac = pos - low
    idx = np.stack([low, high], -1)
    w = np.stack([1.0 - frac, frac], -1) * valid[..., None]
    return idx, w


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """[K, C, PH, PW] pooled features of the boxes (x1, y1, x2, y2) on input [N, C, H, W]."""
    if input.dim() != 4:
        raise ValueError(f"roi_align: input should be 4-D [N, C, H, W], got shape "
                         f"{tuple(input.shape)}")
    rois = _to_rois(boxes)
    ph, pw = _pair(output_size)
    n, c, h, w = input.shape
    r = rois.detach().double().numpy()
    flat = input.reshape(n, c, h * w)
    offset = 0.5 if aligned else 0.0
    outs = []
    for k in range(r.shape[0]):
        b = int(r[k, 0])
        x1, y1, x2, y2 = (r[k, 1:] * spatial_scale - offset).tolist()
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(rh / ph)
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        if gh <= 0 or gw <= 0:
            outs.append(zeros((c, ph, pw), dtype=input.dtype, device=input.device))
            continue
        yi, yw = _axis_samples(y1, rh, ph, gh, h)          # [PH, GH, 2]
        xi, xw = _axis_samples(x1, rw, pw, gw, w)          # [PW, GW, 2]
        # [PH, PW, GH, GW, 2, 2] flat indices and weights of the four corners
        idx = yi[:, None, :, None, :, None] * w + xi[None, :, None, :, None, :]
        wt = yw[:, None, :, None, :, None] * xw[None, :, None, :, None, :] / count
        idx = tensor(idx.reshape(-1), device=input.device)
        wt = tensor(wt.reshape(ph, pw, -1), dtype=input.dtype, device=input.device)
        vals = flat[b][:, idx].reshape(c, ph, pw, -1)
        outs.append((vals * wt).sum(-1))
    if not outs:
        return zeros((0, c, ph, pw), dtype=input.dtype, device=input.device)
    return stack(outs, 0)


class RoIAlign(nn.Module):
    """Module form of roi_align."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")
