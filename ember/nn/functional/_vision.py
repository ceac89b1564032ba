"""Resampling in nn.functional: interpolate (upsample, upsample_nearest,
upsample_bilinear), grid_sample and affine_grid.

Note: every interpolate mode is separable, so it is a composite of ember ops: per
spatial dim, a few taps (1 for nearest, 2 for linear, 4 for cubic) are gathered with
index_select and weighted; the indices and weights are PyTorch's (UpSample.h: source
index, guard_index_and_lambda, cubic coefficients with A = -0.75, nearest in float32
with its exact shortcuts for scale 1 and 2). 'area' is adaptive_avg_pool. Autograd
goes through index_select (its vjp is index_add), so double backward works.

grid_sample calls the registry op `grid_sampler` (ops/grid_sampler.py; float32 under cpu
autocast, as in PyTorch). Its computation is a composite of ember ops (coordinate unnormalisation,
border/reflection padding, one gather per tap), which serves as the cpu kernel (run on
the arrays without autograd), as `decomp=`, and as the vjp: the vjp re-runs the
composite with grad enabled and pulls the gradient back through it, so the gradients
(input and grid; zero grid gradient for 'nearest'; the unnormalisation-only grid
gradient for 'bicubic') are those of PyTorch's formulas and double backward works.
"""
import math
import warnings

import numpy as np

from ... import _dtype as D
from ..._dispatch import dispatch
from ...ops._elementwise import type_name
from ...ops.creation import tensor, zeros, linspace, ones
from ...ops.grid_sampler import GRID_SAMPLER, cubic1 as _cubic1, cubic2 as _cubic2
from ...ops.shape import stack
from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample",
           "affine_grid"]

_INTERP_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area",
                 "nearest-exact")
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


# ------------------------------------------------------------------ indices and weights

def _scale_value(scale, i, o, dtype):
    """compute_scales_value: 1/scale when a scale was given, else in/out (in `dtype`)."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(i) / dtype(o)


def _nearest_taps(i, o, scale, exact):
    if not exact and o == i:
        return np.arange(o)
    if not exact and o == 2 * i:
        return np.arange(o) >> 1
    s = _scale_value(scale, i, o, np.float32)
    dst = np.arange(o, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0))
    return np.minimum(np.floor(dst * s).astype(np.int64), i - 1)


def _source_index(i, o, scale, align_corners, cubic):
    if align_corners:
        s = (i - 1) / (o - 1) if o > 1 else 0.0
        return s * np.arange(o, dtype=np.float64)
    s = _scale_value(scale, i, o, np.float64)
    src = s * (np.arange(o, dtype=np.float64) + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0)


def _linear_taps(i, o, scale, align_corners):
    src = _source_index(i, o, scale, align_corners, False)
    i0 = np.minimum(np.floor(src).astype(np.int64), i - 1)
    lam = np.clip(src - i0, 0, 1)
    i1 = i0 + (i0 < i - 1)
    return [(i0, 1 - lam), (i1, lam)]


def _cubic_taps(i, o, scale, align_corners):
    src = _source_index(i, o, scale, align_corners, True)
    i0 = np.minimum(np.floor(src).astype(np.int64), i - 1)
    t = np.clip(src - i0, 0, 1)
    ws = [_cubic2(t + 1), _cubic1(t), _cubic1(1 - t), _cubic2(2 - t)]
    return [(np.clip(i0 - 1 + j, 0, i - 1), w) for j, w in enumerate(ws)]


def _resample(x, mode, out_size, scales, align_corners):
    """Separable resampling of x's trailing spatial dims, one dim at a time."""
    n = len(out_size)
    low = x.dtype in (D.float16, D.bfloat16)
    y = x.float() if low else x
    finite = "nearest" in mode or bool(y.detach().isfinite().all())
    for k in range(n):
        dim = y.dim() - n + k
        i, o = y.shape[dim], out_size[k]
        scale = scales[k] if scales else None
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_taps(i, o, scale, mode == "nearest-exact")
            y = y.index_select(dim, tensor(idx, dtype=D.int64))
            continue
        taps = _cubic_taps(i, o, scale, align_corners) if mode == "bicubic" else \
            _linear_taps(i, o, scale, align_corners)
        if i * o <= _DENSE_MAX and finite:
            y = _dense_resample(y, dim, taps, i, o)
            continue
        shape = [o] + [1] * (y.dim() - dim - 1)
        acc = None
        for idx, w in taps:
            term = y.index_select(dim, tensor(idx, dtype=D.int64)) * \
                tensor(w, dtype=y.dtype).reshape(shape)
            acc = term if acc is None else acc + term
        y = acc
    return y.to(x.dtype) if low else y


_DENSE_MAX = 1 << 16     # sizes whose (out, in) interpolation matrix is small enough


def _dense_resample(y, dim, taps, i, o):
    """The taps as one (o, i) matrix applied with matmul (BLAS, and a matmul backward);
    only for finite inputs, where the matrix's zeros cannot meet an inf."""
    m = np.zeros((o, i))
    for idx, w in taps:
        np.add.at(m, (np.arange(o), idx), w)
    mt = tensor(m.T, dtype=y.dtype)
    return (y.movedim(dim, -1) @ mt).movedim(-1, dim)


def _check_sizes(x, out_size):
    n = len(out_size)
    spatial = list(x.shape[-n:])
    if any(s <= 0 for s in spatial) or any(o <= 0 for o in out_size):
        names = ("D", "H", "W")[3 - n:]
        ins = ", ".join(f"{a}: {s}" for a, s in zip(names, spatial))
        outs = ", ".join(f"{a}: {s}" for a, s in zip(names, out_size))
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"({ins}) output ({outs})")
    if x.shape[1] == 0:
        raise RuntimeError(f"Non-empty {x.dim()}D data tensor expected but got a tensor with "
                           f"sizes {list(x.shape)}")


# ------------------------------------------------------------------ interpolate

def _is_integer(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _sizes(input, size, scale_factor, dim):
    """(output_size, scale_factors): exactly one is a list (PyTorch's interpolate)."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(v) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(v) for v in size]}")
            return [int(v) for v in size], None
        return [int(size)] * dim, None
    if scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            return None, [float(s) for s in scale_factor]
        return None, [float(scale_factor)] * dim
    raise ValueError("either size or scale_factor should be defined")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize input's spatial dims (N, C, *S) to `size` or by `scale_factor`."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    output_size, scales = _sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scales[i]) for i in range(dim)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if input.dim() not in (3, 4, 5) or mode not in _INTERP_MODES or \
            input.dim() != _NEEDS.get(mode, input.dim()):
        if mode in ("linear", "bilinear", "trilinear") and input.dim() in (3, 4, 5):
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_NEEDS[mode]}D input")
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got "
            f"{input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | area | nearest-exact (got {mode})")
    if mode == "area":
        fn = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return fn(input, output_size)
    if output_size is None:
        output_size = [int(input.shape[i + 2] * scales[i]) for i in range(dim)]
    kind = {"nearest": "nearest", "nearest-exact": "_nearest_exact", "linear": "linear",
            "bilinear": "bilinear", "bicubic": "bicubic", "trilinear": "trilinear"}[mode]
    ok = input.dtype._kind == 2 or (input.dtype is D.uint8 and "nearest" in mode)
    if not ok:
        raise NotImplementedError(f"\"upsample_{kind}{dim}d\" not implemented for "
                                  f"'{type_name(input.dtype)}'")
    _check_sizes(input, output_size)
    if antialias and mode in ("bilinear", "bicubic"):
        from ...ops.antialias import interpolate_aa
        return interpolate_aa(input, output_size, mode, align_corners, scales)
    return _resample(input, mode, output_size, scales, align_corners)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ------------------------------------------------------------------ grid_sample

def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample input at grid's normalised (x, y[, z]) locations in [-1, 1]."""
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    pads = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in pads:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return dispatch(GRID_SAMPLER, (input, grid, modes[mode], pads[padding_mode],
                                   bool(align_corners)))


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


# ------------------------------------------------------------------ affine_grid

def _base_coords(steps, align_corners, dtype):
    if steps <= 1:
        return zeros(1, dtype=dtype)
    r = linspace(-1, 1, steps, dtype=dtype)
    return r if align_corners else r * ((steps - 1) / steps)


def affine_grid(theta, size, align_corners=None):
    """The (N, *S, n) sampling grid of the affine maps theta (N, n, n+1), for grid_sample."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = len(spatial)
    N = size[0]
    axes = [_base_coords(s, align_corners, theta.dtype) for s in spatial]   # (D,) H, W
    cols = []
    for j in range(n):          # column j holds the coordinate along spatial dim n-1-j
        k = n - 1 - j
        shape = [1] * n
        shape[k] = spatial[k]
        cols.append(axes[k].reshape(shape).expand(spatial))
    cols.append(ones(spatial, dtype=theta.dtype))
    base = stack(cols, -1).reshape(1, -1, n + 1)                       # (1, P, n+1)
    grid = base.expand(N, math.prod(spatial), n + 1).bmm(theta.transpose(1, 2))
    return grid.reshape([N] + spatial + [n])
