"""The registry op `grid_sampler` (F.grid_sample, aten::grid_sampler): sample an input at
a grid's normalised (x, y[, z]) locations.

Note: its computation is a composite of ember ops (coordinate unnormalisation,
border/reflection padding, one gather per tap), which serves as the cpu kernel (run on the
arrays without autograd), as `decomp=`, and as the vjp: the vjp re-runs the composite with
grad enabled and pulls the gradient back through it, so the gradients (input and grid; zero
grid gradient for 'nearest'; the unnormalisation-only grid gradient for 'bicubic') are those
of PyTorch's formulas and double backward works. Modes are PyTorch's integers: bilinear 0,
nearest 1, bicubic 2; padding zeros 0, border 1, reflection 2.
"""
import math

import numpy as np

from .._tensor import wrap
from ..autograd.grad_mode import no_grad
from ._composite import decomp_vjp
from ._elementwise import type_name
from ._registry import register
from .creation import zeros
from .indexing import where

_A = -0.75      # PyTorch's bicubic coefficient (UpSample.h), shared with F.interpolate


def cubic1(x):
    """Keys cubic for |x| <= 1."""
    return ((_A + 2) * x - (_A + 3)) * x * x + 1


def cubic2(x):
    """Keys cubic for 1 < |x| < 2."""
    return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A


def _unnormalize(c, size, align_corners):
    if align_corners:
        return (c + 1) / 2 * (size - 1)
    return ((c + 1) * size - 1) / 2


def _clip(c, size):
    """clip_coordinates, with PyTorch's gradient: 1 strictly inside (0, size-1), else 0."""
    clamped = c.detach().clamp(0, size - 1)
    return where((c > 0) & (c < size - 1), c, clamped)


def _reflect(c, twice_low, twice_high):
    """reflect_coordinates: fold c into [twice_low/2, twice_high/2] (mirror at the ends)."""
    if twice_low == twice_high:
        return c * 0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = (c - lo).abs()
    flips = (d.detach() / span).floor()
    extra = d - flips * span
    return where(flips.remainder(2) == 0, extra + lo, span - extra + lo)


def _pad_coord(c, size, padding_mode, align_corners):
    if padding_mode == 1:
        return _clip(c, size)
    if padding_mode == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else \
            _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _taps(c, size, mode, padding_mode, align_corners):
    """[(integer index tensor, weight tensor or None)] along one dim."""
    if mode == 1:                                          # nearest: round half to even
        return [(c.detach().round(), None)]
    c0 = c.detach().floor()
    t = c - c0
    if mode == 0:
        return [(c0, 1 - t), (c0 + 1, t)]
    ws = [cubic2(t + 1), cubic1(t), cubic1(1 - t), cubic2(2 - t)]
    return [(_pad_coord(c0 + (j - 1), size, padding_mode, align_corners), w)
            for j, w in enumerate(ws)]


def _grid_sample_decomp(input, grid, mode, padding_mode, align_corners):
    n = input.dim() - 2
    N, C = input.shape[:2]
    sizes = list(input.shape[2:])
    out_sp = list(grid.shape[1:-1])
    M = math.prod(out_sp)
    flat = input.reshape(N, C, math.prod(sizes))
    per_dim = []
    for k in range(n):
        c = _unnormalize(grid[..., n - 1 - k], sizes[k], align_corners)
        if mode != 2:
            c = _pad_coord(c, sizes[k], padding_mode, align_corners)
        per_dim.append(_taps(c, sizes[k], mode, padding_mode, align_corners))
    out = None
    for combo in np.ndindex(*[len(t) for t in per_dim]):
        lin, valid, weight = 0, None, None
        for k, j in enumerate(combo):
            idx, w = per_dim[k][j]
            inside = (idx >= 0) & (idx <= sizes[k] - 1)
            valid = inside if valid is None else valid & inside
            # NaN coordinates read a valid pixel (masked by `valid` or turned NaN by the
            # weights below), never an out-of-range index
            lin = lin + idx.nan_to_num(0.0).clamp(0, sizes[k] - 1).long() * \
                math.prod(sizes[k + 1:])
            if w is not None:
                weight = w if weight is None else weight * w
        g = flat.gather(2, lin.reshape(N, 1, M).expand(N, C, M))
        wv = valid.to(input.dtype) if weight is None else where(valid, weight, weight * 0)
        term = g * wv.reshape(N, 1, M)
        out = term if out is None else out + term
    return out.reshape([N, C] + out_sp)


def _grid_sampler_kernel(input, grid, mode, padding_mode, align_corners):
    with no_grad():
        return _grid_sample_decomp(wrap(input), wrap(grid), mode, padding_mode,
                                   align_corners)._data


def _grid_sampler_meta(input, grid, mode, padding_mode, align_corners):
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    n = input.dim() - 2
    if grid.shape[-1] != n:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {n} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if mode == 2 and n != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    for d in range(2, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if input.dtype._kind != 2:
        raise NotImplementedError(f"\"grid_sampler_{n}d_cpu_kernel_impl\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found "
                           f"{type_name(grid.dtype)}")
    return (input.shape[0], input.shape[1]) + tuple(grid.shape[1:-1]), input.dtype


_grid_decomp_vjp = decomp_vjp(_grid_sample_decomp)


def _grid_sampler_vjp(ctx, grad):
    """Pull grad back through the composite; a grid the output does not reach gets 0."""
    gi, gg = _grid_decomp_vjp(ctx, grad)[:2]
    if gg is None and ctx.needs_input_grad[1]:
        grid = ctx.args[1]
        gg = zeros(grid.shape, dtype=grid.dtype)
    return gi, gg, None, None, None


GRID_SAMPLER = register("grid_sampler", _grid_sampler_kernel, meta=_grid_sampler_meta,
                        vjp=_grid_sampler_vjp, decomp=_grid_sample_decomp, check=True,
                        tags=("gather",), amp_policy="fp32",
                        schema="grid_sampler(Tensor input, Tensor grid, int interpolation_mode, "
                               "int padding_mode, bool align_corners) -> Tensor")
