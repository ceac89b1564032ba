"""Convolutions and their relatives in nn.functional: conv1d/2d/3d, conv_transpose1d/2d/3d,
unfold/fold, pixel_shuffle/pixel_unshuffle, channel_shuffle.

Note: as PyTorch's C++ conv{n}d wrappers do, these handle the unbatched form (one
unsqueeze), the string paddings 'valid' and 'same' (an even kernel pads one more zero
at the end, with PyTorch's warning) and then call the `convolution` primitive.
unfold/fold are the im2col/col2im primitives; the shuffles are view compositions
(reshape/permute), as in PyTorch.
"""
import warnings

from ...ops.conv import convolution, im2col, col2im
from ...ops.creation import zeros
from ...ops.shape import cat

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle"]


def _ints(fname, arg, value, n):
    """An int becomes n copies; a sequence stays (the primitive expands length 1)."""
    if isinstance(value, int):
        return [value] * n
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return list(value)
    raise TypeError(f"{fname}(): argument '{arg}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _batch(fname, input, n):
    """(batched input, whether it was unbatched), or PyTorch's rank error."""
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{fname}, but got input of size: {list(input.shape)}")
    if input.dim() == n + 1:
        return input.unsqueeze(0), True
    return input, False


def _same_padding(input, weight, stride, dilation, n):
    """PyTorch's padding='same': symmetric padding plus one zero at the end of each
    dimension whose total padding is odd. Returns (input, padding)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = dilation * n if len(dilation) == 1 else dilation
    padding, extra = [], []
    for d, k in zip(dilation, weight.shape[2:]):
        total = d * (k - 1)
        padding.append(total // 2)
        extra.append(total - 2 * (total // 2))
    if any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created")
    for i, e in enumerate(extra):
        if e:
            shape = list(input.shape)
            shape[2 + i] = e
            input = cat([input, zeros(shape, dtype=input.dtype)], 2 + i)
    return input, padding


def _conv(fname, n, input, weight, bias, stride, padding, dilation, groups):
    input, unbatched = _batch(fname, input, n)
    stride = _ints(fname, "stride", stride, n)
    dilation = _ints(fname, "dilation", dilation, n)
    if isinstance(padding, str):
        if padding == "valid":
            padding = [0] * n
        elif padding == "same":
            input, padding = _same_padding(input, weight, stride, dilation, n)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _ints(fname, "padding", padding, n)
    out = convolution(input, weight, bias, stride, padding, dilation, False, [0] * n, groups)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(fname, n, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    input, unbatched = _batch(fname, input, n)
    args = [_ints(fname, name, v, n) for name, v in
            (("stride", stride), ("padding", padding), ("dilation", dilation),
             ("output_padding", output_padding))]
    stride, padding, dilation, output_padding = args
    out = convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                      groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d convolution over (N, C, L) or (C, L) input; padding may be 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d convolution over (N, C, H, W) or (C, H, W) input."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d convolution over (N, C, D, H, W) or (C, D, H, W) input."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """1-d transposed convolution (the gradient of conv1d with respect to its input)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """2-d transposed convolution."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """3-d transposed convolution."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of a (N, C, H, W) or (C, H, W) input as columns (im2col)."""
    return im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sums columns of sliding blocks back into an image (col2im), unfold's adjoint."""
    return col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                  _pair(padding), _pair(stride))


def _check_factor(fname, input, factor, what):
    if input.dim() < 3:
        raise RuntimeError(f"{fname} expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{fname} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""
    r = upscale_factor
    _check_factor("pixel_shuffle", input, r, "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    r = downscale_factor
    _check_factor("pixel_unshuffle", input, r, "downscale_factor")
    *lead, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({dim})={size} is not "
                               f"divisible by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, g*k, *) -> (N, k*g, *): channel c*g + j moves to j*k + c."""
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. "
                           f"Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle
