"""Pooling in nn.functional: max/avg/adaptive/lp pooling (1-d, 2-d, 3-d) and max_unpool.

Note: as in PyTorch, 1-d pooling is 2-d pooling over an unsqueezed last dim (the 1-d
functions check the rank first, with PyTorch's messages), lp_pool is a composite over
avg_pool (or max_pool for p = +-inf), and max_unpool computes its default output size
in Python (`_unpool_output_size`) before calling the max_unpool primitive.
"""
import collections.abc

from ...ops import pool as P

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]


def _tuple(fname, arg, v, n, none_ok=False):
    """An int becomes (v,)*n; a sequence of ints stays (the primitive checks its length)."""
    if v is None and none_ok:
        return []
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    if isinstance(v, collections.abc.Sequence) and all(isinstance(x, int) for x in v):
        return list(v)
    raise TypeError(f"{fname}(): argument '{arg}' must be tuple of ints, not "
                    f"{type(v).__name__}")


def _check_1d(fname, input):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{fname}: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")


# ------------------------------------------------------------------ max pooling

def _max(fname, n, input, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(fname, "kernel_size", kernel_size, n)
    s = _tuple(fname, "stride", stride, n, none_ok=True)
    p = _tuple(fname, "padding", padding, n)
    d = _tuple(fname, "dilation", dilation, n)
    return k, s, p, d


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-d max pooling: (values, indices into the input's last dim)."""
    k, s, p, d = _max("max_pool1d", 1, input, kernel_size, stride, padding, dilation,
                      ceil_mode)
    _check_1d("max_pool1d", input)
    if len(k) != 1 or len(s) > 1 or len(p) != 1 or len(d) != 1:
        raise RuntimeError("max_pool1d() argument must be a single int, or a tuple of one int")
    out, idx = P.max_pool_with_indices(input.unsqueeze(-2), 2, [1] + k, [1] + (s or k),
                                       [0] + p, [1] + d, ceil_mode)
    return out.squeeze(-2), idx.squeeze(-2)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-d max pooling: (values, flat H*W indices of each max)."""
    k, s, p, d = _max("max_pool2d", 2, input, kernel_size, stride, padding, dilation,
                      ceil_mode)
    return P.max_pool_with_indices(input, 2, k, s, p, d, ceil_mode)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-d max pooling: (values, flat D*H*W indices of each max)."""
    k, s, p, d = _max("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                      ceil_mode)
    return P.max_pool_with_indices(input, 3, k, s, p, d, ceil_mode)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-d max pooling over (N, C, L) or (C, L); return_indices=True also gives indices."""
    if not input.dtype.is_floating_point:
        from ...ops._elementwise import type_name
        raise NotImplementedError(f'"max_pool1d_impl" not implemented for '
                                  f"'{type_name(input.dtype)}'")
    r = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-d max pooling over (N, C, H, W) or (C, H, W)."""
    r = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return r if return_indices else r[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-d max pooling over (N, C, D, H, W) or (C, D, H, W)."""
    if return_indices:
        return max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    k, s, p, d = _max("max_pool3d", 3, input, kernel_size, stride, padding, dilation,
                      ceil_mode)
    return P.max_pool3d(input, k, s, p, d, ceil_mode)


# ------------------------------------------------------------------ average pooling

def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-d average pooling over (N, C, L) or (C, L)."""
    k = _tuple("avg_pool1d", "kernel_size", kernel_size, 1)
    s = _tuple("avg_pool1d", "stride", stride, 1, none_ok=True)
    p = _tuple("avg_pool1d", "padding", padding, 1)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    if len(k) != 1 or len(s) > 1 or len(p) != 1:
        raise RuntimeError("avg_pool1d() argument must be a single int, or a tuple of one int")
    out = P.avg_pool(input.unsqueeze(-2), 2, [1] + k, [1] + (s or k), [0] + p, ceil_mode,
                     count_include_pad, None)
    return out.squeeze(-2)


def _avg(fname, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
         divisor_override):
    k = _tuple(fname, "kernel_size", kernel_size, n)
    s = _tuple(fname, "stride", stride, n, none_ok=True)
    p = _tuple(fname, "padding", padding, n)
    if 0 < input.dim() <= n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-input.dim()}, {input.dim() - 1}], but got {-n - 1})")
    return P.avg_pool(input, n, k, s, p, ceil_mode, count_include_pad, divisor_override)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-d average pooling over (N, C, H, W) or (C, H, W)."""
    return _avg("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-d average pooling over (N, C, D, H, W) or (C, D, H, W)."""
    return _avg("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                count_include_pad, divisor_override)


# ------------------------------------------------------------------ adaptive pooling

def _list_with_default(out_size, defaults):
    """PyTorch's _list_with_default: None entries keep the input's size."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _out_size(fname, output_size, input, n):
    size = _list_with_default(output_size, list(input.shape))
    return _tuple(fname, "output_size", size, n)


def adaptive_avg_pool1d(input, output_size):
    """Average over PyTorch's adaptive windows, giving output_size along the last dim."""
    o = _tuple("adaptive_avg_pool1d", "output_size", output_size, 1)
    if len(o) != 1:
        raise RuntimeError("adaptive_avg_pool1d: output_size must be 1")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d() argument 'input' (position 1) must be 2D or "
                           f"3D, but got {input.dim()}D")
    return P.adaptive_avg_pool(input.unsqueeze(-2), 2, [1] + o).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    """2-d adaptive average pooling; None in output_size keeps that input size."""
    return P.adaptive_avg_pool(input, 2, _out_size("adaptive_avg_pool2d", output_size,
                                                   input, 2))


def adaptive_avg_pool3d(input, output_size):
    """3-d adaptive average pooling."""
    return P.adaptive_avg_pool(input, 3, _out_size("adaptive_avg_pool3d", output_size,
                                                   input, 3))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    o = _tuple("adaptive_max_pool1d", "output_size", output_size, 1)
    if len(o) != 1:
        raise RuntimeError("adaptive_max_pool1d: output_size must be 1")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d() argument 'input' (position 1) must be 2D or "
                           f"3D, but got {input.dim()}D")
    out, idx = P.adaptive_max_pool(input.unsqueeze(-2), 2, [1] + o)
    return out.squeeze(-2), idx.squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return P.adaptive_max_pool(input, 2, _out_size("adaptive_max_pool2d", output_size,
                                                   input, 2))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return P.adaptive_max_pool(input, 3, _out_size("adaptive_max_pool3d", output_size,
                                                   input, 3))


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-d adaptive max pooling; return_indices=True also gives the argmax indices."""
    r = adaptive_max_pool1d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-d adaptive max pooling."""
    r = adaptive_max_pool2d_with_indices(input, output_size)
    return r if return_indices else r[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-d adaptive max pooling."""
    r = adaptive_max_pool3d_with_indices(input, output_size)
    return r if return_indices else r[0]


# ------------------------------------------------------------------ lp pooling

def _lp(n, input, norm_type, kernel_size, stride, ceil_mode):
    maxp = (max_pool1d, max_pool2d, max_pool3d)[n - 1]
    avgp = (avg_pool1d, avg_pool2d, avg_pool3d)[n - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if n == 1:
        size = kernel_size
    else:
        size = 1
        for k in (kernel_size if isinstance(kernel_size, (tuple, list)) else
                  [kernel_size] * n):
            size *= k
    out = avgp(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum over the window of x**p) ** (1/p)."""
    return _lp(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling."""
    return _lp(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling."""
    return _lp(3, input, norm_type, kernel_size, stride, ceil_mode)


# ------------------------------------------------------------------ max unpooling

def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    n = len(kernel_size)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(n)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not (lo < output_size[d] < hi):
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f'between {lo} and {hi})')
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={ret[d]}")
    return ret


def _unpool_args(fname, n, kernel_size, stride, padding):
    k = _tuple(fname, "kernel_size", kernel_size, n)
    s = _tuple(fname, "stride", stride, n) if stride is not None else k
    p = _tuple(fname, "padding", padding, n)
    return k, s, p


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: values go back to their indices, zeros elsewhere."""
    k, s, p = _unpool_args("max_unpool1d", 1, kernel_size, stride, padding)
    size = _unpool_output_size(input, k, s, p, output_size)
    return P.max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d."""
    k, s, p = _unpool_args("max_unpool2d", 2, kernel_size, stride, padding)
    return P.max_unpool(input, indices, _unpool_output_size(input, k, s, p, output_size))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d."""
    k, s, p = _unpool_args("max_unpool3d", 3, kernel_size, stride, padding)
    return P.max_unpool(input, indices, _unpool_output_size(input, k, s, p, output_size),
                        s, p)
