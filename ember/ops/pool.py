"""Pooling and padding primitives: max/avg pooling (2-d, 3-d; 1-d goes through 2-d as in
PyTorch), adaptive avg/max pooling, max unpooling, and the pads (constant, reflection,
replication).

Note: the window kernels read a strided window view of the padded input
(`sliding_window_view`, no copy) and reduce over its kernel axes, so no Python loop
runs over output pixels. Adaptive pooling has windows of varying size: the average is
separable, one (out, in) averaging matrix per spatial dim; the max gathers every window
padded to the largest window with repeats of its own last element (which never changes
a max or which element comes first), then takes one argmax.

The vjps, in ember ops: max pooling scatters the gradient into the argmax indices
(scatter_add; overlapping windows accumulate), avg pooling is a transposed window sum
(a transposed convolution with a ones kernel, then a crop by constant_pad_nd), the
adaptive average applies the transposed matrices, max unpooling gathers, a constant pad
is the opposite pad, and reflection/replication pads index_add the gradient back.
Op names and autocast policies follow PyTorch's CPU autocast lists: max_pool3d,
avg_pool3d, adaptive_avg/max_pool3d, max_unpool2d/3d, reflection_pad1d/2d and
replication_pad1d/2d/3d run in float32.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import _dtype as D
from .._dispatch import dispatch
from ._elementwise import type_name
from ._registry import register

__all__ = ["constant_pad_nd"]


def _low(a):
    return a.dtype == np.float16 or a.dtype == D.bfloat16.np


def _x(sizes):
    return "x".join(str(s) for s in sizes)


# ------------------------------------------------------------------ geometry

def pool_output_size(i, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape: a ceil-mode window must start inside input+pad."""
    o = (i + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= i + p:
        o -= 1
    return o


def _windows(x, n, kernel, stride, padding, dilation, osize, fill, flat=True):
    """(..., *osize, prod(kernel)) windows of x's last n dims, padded with `fill` (with
    flat=False the view (..., *osize, *kernel), not gathered)."""
    lead = x.shape[:-n]
    isize = x.shape[-n:]
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    right = [max(0, (o - 1) * s + sp - i - p) for o, s, sp, i, p in
             zip(osize, stride, span, isize, padding)]
    if any(padding) or any(right):
        xp = np.full(lead + tuple(i + p + r for i, p, r in zip(isize, padding, right)), fill,
                     x.dtype)
        xp[(Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, isize))] = x
    else:
        xp = x
    w = sliding_window_view(xp, span, axis=tuple(range(xp.ndim - n, xp.ndim)))
    w = w[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(osize, stride))
          + tuple(slice(None, None, d) for d in dilation)]
    if not flat:
        return w
    return w.reshape(w.shape[:len(lead) + n] + (math.prod(kernel),))


def _lowest(dtype):
    if dtype.kind == "f" or dtype == D.bfloat16.np:
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


# ------------------------------------------------------------------ argument checks

def _n_names(n):
    return ("T", "H", "W")[3 - n:]


def _check_window_args(name, n, kernel, stride, padding, dilation, input):
    """pool{n}d_shape_check: positivity, pad <= half the kernel, rank, output size."""
    nm = _n_names(n)
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{a}: {k}" for a, k in zip(nm, kernel)))
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{a}: {s}" for a, s in zip(nm, stride)))
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{a}: {d}" for a, d in zip(nm, dilation)))
    if any(p < 0 for p in padding):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(padding)}")
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if input.ndim not in (n + 1, n + 2) or (0 in input.shape[-n:]):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for "
                           "input")
    if input.shape[-n - 1] == 0:
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")


def _expand(name, op, value, n, allow_empty=False):
    value = list(value)
    if allow_empty and not value:
        return None
    if len(value) == 1:
        return value * n
    if len(value) != n:
        what = {"kernel_size": "kernel_size must either be a single int, or a tuple of",
                "stride": "stride must either be omitted, a single int, or a tuple of",
                "padding": "padding must either be a single int, or a tuple of",
                "dilation": "dilation must be either a single int, or a tuple of"}[name]
        count = {2: "two", 3: "three"}[n]
        raise RuntimeError(f"{op}: {what} {count} ints")
    return value


def _pool_args(op, n, kernel, stride, padding, dilation=(1,)):
    kernel = _expand("kernel_size", op, kernel, n)
    stride = _expand("stride", op, stride, n, allow_empty=True) or list(kernel)
    return kernel, stride, _expand("padding", op, padding, n), _expand("dilation", op,
                                                                       dilation, n)


def _out_sizes(input, n, kernel, stride, padding, dilation, ceil_mode):
    isize = tuple(input.shape[-n:])
    osize = tuple(pool_output_size(i, k, s, p, d, ceil_mode) for i, k, s, p, d in
                  zip(isize, kernel, stride, padding, dilation))
    if any(o < 1 for o in osize):
        c = input.shape[-n - 1]
        raise RuntimeError(f"Given input size: ({_x((c,) + isize)}). Calculated output size: "
                           f"({_x((c,) + osize)}). Output size is too small")
    return osize


# ------------------------------------------------------------------ max pooling

def _max_pool_np(x, n, kernel, stride, padding, dilation, ceil_mode):
    kernel, stride, padding, dilation = _pool_args("max_pool", n, kernel, stride, padding,
                                                   dilation)
    isize = x.shape[-n:]
    osize = tuple(pool_output_size(i, k, s, p, d, ceil_mode) for i, k, s, p, d in
                  zip(isize, kernel, stride, padding, dilation))
    xc = x.astype(np.float32) if _low(x) else x
    if math.prod(kernel) <= 16:
        val, arg = _max_scan(xc, n, kernel, stride, padding, dilation, osize)
        val = val.astype(x.dtype, copy=False)
    else:
        w = _windows(xc, n, kernel, stride, padding, dilation, osize, _lowest(xc.dtype))
        arg = np.argmax(w, axis=-1)
        val = np.take_along_axis(w, arg[..., None], -1)[..., 0].astype(x.dtype)
        if xc.dtype.kind == "f":
            nan = np.isnan(val)
            if nan.any():       # PyTorch's `val > maxval || isnan(val)`: a window's last NaN
                arg[nan] = w.shape[-1] - 1 - np.argmax(np.isnan(w[nan][:, ::-1]), axis=-1)
    if not val.size:
        return val, np.zeros(val.shape, np.int64)
    # the flat input index of every (output position, kernel offset), clipped into the
    # input per dimension, is a small table: one lookup per output instead of unravelling
    # and re-ravelling every argmax
    pos = np.unravel_index(np.arange(math.prod(kernel)), kernel)
    coords = []
    for k in range(n):
        start = np.arange(osize[k]) * stride[k] - padding[k]
        c = start.reshape((-1,) + (1,) * (n - k)) + dilation[k] * pos[k]
        coords.append(c)
    table = np.ravel_multi_index(np.broadcast_arrays(*coords), isize, mode="clip")
    flat = arg.reshape(-1, math.prod(osize))
    flat += np.arange(flat.shape[1]) * table.shape[-1]
    return val, table.reshape(-1)[flat].reshape(arg.shape)


def _max_scan(xc, n, kernel, stride, padding, dilation, osize):
    """(max, flat kernel offset of the max) of every window, PyTorch's loop over the
    kernel offsets done one offset at a time over all windows: a strided view and a few
    elementwise passes per offset, no gathered window copy and no argmax over a
    tiny axis. `v > max || isnan(v)` keeps the first maximum and a window's last NaN;
    masked writes (~1 ms per 256K elements) are replaced by maximum and int8 arithmetic."""
    w = _windows(xc, n, kernel, stride, padding, dilation, osize, _lowest(xc.dtype),
                 flat=False)
    offs = list(np.ndindex(*kernel))
    val = np.array(w[(Ellipsis,) + offs[0]], order="C")    # C order, as the gather gave
    arg = np.zeros(val.shape, np.int8)          # offsets < 16: int8 arithmetic is cheap
    floating = xc.dtype.kind == "f"
    m = np.empty(val.shape, bool)
    step = np.empty(val.shape, np.int8)
    for j, off in enumerate(offs[1:], 1):
        v = w[(Ellipsis,) + off]
        np.greater(v, val, out=m)
        if floating:
            m |= np.isnan(v)
        np.maximum(val, v, out=val)             # a NaN stays the max, as in PyTorch
        np.subtract(j, arg, out=step)           # arg = m ? j : arg, without a masked write
        step *= m.view(np.int8)
        arg += step
    return val, arg.astype(np.int64)


def _max_pool_meta(n, name, with_indices=True):
    def meta(x, kernel, stride, padding, dilation, ceil_mode):
        kernel, stride, padding, dilation = _pool_args(name, n, kernel, stride, padding,
                                                       dilation)
        _check_window_args(name, n, kernel, stride, padding, dilation, x)
        osize = _out_sizes(x, n, kernel, stride, padding, dilation, ceil_mode)
        if x.dtype is D.bool or x.dtype._kind == 3:
            raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(x.dtype)}'")
        shape = tuple(x.shape[:-n]) + osize
        return ((shape, x.dtype), (shape, D.int64)) if with_indices else (shape, x.dtype)
    return meta


def max_pool_backward(grad, indices, input_shape, n):
    """Scatter grad into the flat spatial argmax indices (overlapping windows accumulate)."""
    from .creation import zeros
    nlead = len(input_shape) - n
    rows = math.prod(input_shape[:nlead])
    cols = math.prod(grad.shape[nlead:])
    out = zeros((rows, math.prod(input_shape[nlead:])), dtype=grad.dtype)
    return out.scatter_add(1, indices.reshape(rows, cols), grad.reshape(rows, cols)) \
        .reshape(tuple(input_shape))


def _max_pool_vjp(n):
    def vjp(ctx, grad, _gi=None):
        return (max_pool_backward(grad, ctx.out[1], ctx.shapes[0], n),
                None, None, None, None, None)
    return vjp


def _max_pool_kernel(n):
    return lambda x, k, s, p, d, c: _max_pool_np(x, n, k, s, p, d, c)


MAX_POOL2D = register("max_pool2d_with_indices", _max_pool_kernel(2),
                      meta=_max_pool_meta(2, "max_pool2d"), vjp=_max_pool_vjp(2), save=(),
                      save_out=True, nondiff_outputs=(1,), check=True, tags=("prim", "reduction"),
                      schema="max_pool2d_with_indices(Tensor self, int[2] kernel_size, "
                             "int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
                             "bool ceil_mode=False) -> (Tensor, Tensor)")
MAX_POOL3D = register("max_pool3d_with_indices", _max_pool_kernel(3),
                      meta=_max_pool_meta(3, "max_pool3d"), vjp=_max_pool_vjp(3), save=(),
                      save_out=True, nondiff_outputs=(1,), check=True, tags=("prim", "reduction"),
                      schema="max_pool3d_with_indices(Tensor self, int[3] kernel_size, "
                             "int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
                             "bool ceil_mode=False) -> (Tensor, Tensor)")


def _max_pool3d_vjp(ctx, grad):
    x, k, s, p, d, c = ctx.args
    from ..autograd.grad_mode import no_grad
    with no_grad():
        idx = dispatch(MAX_POOL3D, (x.detach(), k, s, p, d, c))[1]
    return max_pool_backward(grad, idx, ctx.shapes[0], 3), None, None, None, None, None


def _max_pool3d_decomp(x, k, s=(), p=0, d=1, c=False):
    """The values of max_pool3d_with_indices."""
    from .. import _prims as P
    return P.max_pool3d_with_indices(x, k, s, p, d, c)[0]


MAX_POOL3D_VALUES = register(
    "max_pool3d", lambda x, k, s, p, d, c: _max_pool_np(x, 3, k, s, p, d, c)[0],
    meta=_max_pool_meta(3, "max_pool3d", with_indices=False), vjp=_max_pool3d_vjp, save=(0,),
    check=True, tags=("reduction",), amp_policy="fp32", decomp=_max_pool3d_decomp,
                             schema="max_pool3d(Tensor self, int[3] kernel_size, "
                                    "int[3] stride=[], int[3] padding=0, int[3] dilation=1, "
                                    "bool ceil_mode=False) -> Tensor")


def max_pool_with_indices(input, n, kernel_size, stride, padding, dilation, ceil_mode):
    """aten::max_pool{2,3}d_with_indices on (N, C, *S) or (C, *S)."""
    op = MAX_POOL2D if n == 2 else MAX_POOL3D
    return dispatch(op, (input, list(kernel_size), list(stride), list(padding),
                         list(dilation), bool(ceil_mode)))


def max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode):
    """aten::max_pool3d: the values only (float32 under cpu autocast)."""
    return dispatch(MAX_POOL3D_VALUES, (input, list(kernel_size), list(stride), list(padding),
                                        list(dilation), bool(ceil_mode)))


# ------------------------------------------------------------------ average pooling

def _avg_args(n, kernel, stride, padding):
    name = f"avg_pool{n}d"
    kernel = _expand("kernel_size", name, kernel, n)
    stride = _expand("stride", name, stride, n, allow_empty=True) or list(kernel)
    return kernel, stride, _expand("padding", name, padding, n)


def _divisor(isize, osize, kernel, stride, padding, count_include_pad, divisor_override):
    """The per-output divisor (PyTorch's pool_size / the clipped window's size)."""
    if divisor_override:
        return np.full(osize, float(divisor_override))
    div = np.ones((), np.float64)
    for i, o, k, s, p in zip(isize, osize, kernel, stride, padding):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, i + p)
        size = end - start if count_include_pad else \
            np.minimum(end, i) - np.maximum(start, 0)
        div = np.multiply.outer(div, size.astype(np.float64))
    return div


def _avg_pool_np(n, x, kernel, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
    kernel, stride, padding = _avg_args(n, kernel, stride, padding)
    isize = x.shape[-n:]
    osize = tuple(pool_output_size(i, k, s, p, 1, ceil_mode) for i, k, s, p in
                  zip(isize, kernel, stride, padding))
    div = _divisor(isize, osize, kernel, stride, padding, count_include_pad, divisor_override)
    if x.dtype.kind in "iu":
        tot = _windows(x.astype(np.int64), n, kernel, stride, padding, [1] * n, osize, 0) \
            .sum(-1)
        d = div.astype(np.int64)                # C++ integer division: toward zero
        q = np.abs(tot) // np.abs(d)
        return (np.sign(tot) * np.sign(d) * q).astype(x.dtype)
    xc = x.astype(np.float32) if _low(x) else x
    if _tiles(kernel, stride, padding, isize, osize):
        # windows tile the input: per pooled dim, the sum of its k strided slices (a
        # multi-axis sum of a reshaped view is ~20x slower in NumPy), no gather
        tot = xc
        for d, (k, o) in enumerate(zip(kernel, osize)):
            pre = (slice(None),) * (x.ndim - n + d)
            acc = tot[pre + (slice(0, o * k, k),)]
            for j in range(1, k):
                part = tot[pre + (slice(j, o * k, k),)]
                acc = acc + part if j == 1 else np.add(acc, part, out=acc)
            tot = acc
    else:
        tot = _windows(xc, n, kernel, stride, padding, [1] * n, osize, 0).sum(-1)
    return (tot / div.astype(xc.dtype)).astype(x.dtype)


def _tiles(kernel, stride, padding, isize, osize):
    """Do the windows tile the input (stride == kernel, no padding, no partial window)?"""
    return all(k == s and p == 0 and o * k <= i
               for k, s, p, i, o in zip(kernel, stride, padding, isize, osize))


def _avg_pool_meta(n):
    name = f"avg_pool{n}d"

    def meta(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
        kernel, stride, padding = _avg_args(n, kernel, stride, padding)
        if x.ndim in (n + 1, n + 2) and 0 in x.shape[-n - 1:]:
            raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                               f"optional 0 dim batch size for input, but got:{list(x.shape)}")
        _check_window_args(name, n, kernel, stride, padding, [1] * n, x)
        if divisor_override is not None and divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        osize = _out_sizes(x, n, kernel, stride, padding, [1] * n, ceil_mode)
        if x.dtype is D.bool or x.dtype._kind == 3:
            raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(x.dtype)}'")
        return tuple(x.shape[:-n]) + osize, x.dtype
    return meta


def window_sum_transposed(g, n, kernel, stride, padding, isize):
    """The adjoint of the windowed sum: each output's value added back over its window
    (a transposed convolution with a ones kernel), cropped to the input's size."""
    from .conv import convolution
    from .creation import ones
    lead = tuple(g.shape[:-n])
    osize = tuple(g.shape[-n:])
    g2 = g.reshape((math.prod(lead), 1) + osize)
    w = ones((1, 1) + tuple(kernel), dtype=g.dtype)
    full = convolution(g2, w, None, stride, [0] * n, [1] * n, True, [0] * n, 1)
    pads = []
    for k in reversed(range(n)):
        size = (osize[k] - 1) * stride[k] + kernel[k]
        pads += [-padding[k], isize[k] + padding[k] - size]
    return constant_pad_nd(full, pads, 0).reshape(lead + tuple(isize))


def _avg_pool_vjp(n):
    def vjp(ctx, grad):
        _, kernel, stride, padding, _, cip, dov = ctx.args
        kernel, stride, padding = _avg_args(n, kernel, stride, padding)
        isize = tuple(ctx.shapes[0][-n:])
        osize = tuple(grad.shape[-n:])
        from .creation import tensor
        div = _divisor(isize, osize, kernel, stride, padding, cip, dov)
        g = grad / tensor(div, dtype=grad.dtype)
        if _tiles(kernel, stride, padding, isize, osize):     # each window gets its share
            lead = tuple(g.shape[:-n])
            g = g.reshape(lead + sum(((o, 1) for o in osize), ()))
            g = g.expand(lead + sum(((o, k) for o, k in zip(osize, kernel)), ()))
            g = g.reshape(lead + tuple(o * k for o, k in zip(osize, kernel)))
            pads = []
            for k in reversed(range(n)):
                pads += [0, isize[k] - osize[k] * kernel[k]]
            if any(pads):
                g = constant_pad_nd(g, pads, 0)
            return (g, None, None, None, None, None, None)
        return (window_sum_transposed(g, n, kernel, stride, padding, isize),
                None, None, None, None, None, None)
    return vjp


AVG_POOL2D = register("avg_pool2d", lambda *a: _avg_pool_np(2, *a), meta=_avg_pool_meta(2),
                      vjp=_avg_pool_vjp(2), save=(), check=True, tags=("prim", "reduction"),
                      schema="avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                             "int[2] padding=0, bool ceil_mode=False, "
                             "bool count_include_pad=True, int? divisor_override=None) -> Tensor")
AVG_POOL3D = register("avg_pool3d", lambda *a: _avg_pool_np(3, *a), meta=_avg_pool_meta(3),
                      vjp=_avg_pool_vjp(3), save=(), check=True, tags=("prim", "reduction"),
                      amp_policy="fp32",
                      schema="avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], "
                             "int[3] padding=0, bool ceil_mode=False, "
                             "bool count_include_pad=True, int? divisor_override=None) -> Tensor")


def avg_pool(input, n, kernel_size, stride, padding, ceil_mode, count_include_pad,
             divisor_override):
    """aten::avg_pool{2,3}d on (N, C, *S) or (C, *S)."""
    op = AVG_POOL2D if n == 2 else AVG_POOL3D
    return dispatch(op, (input, list(kernel_size), list(stride), list(padding),
                         bool(ceil_mode), bool(count_include_pad), divisor_override))


# ------------------------------------------------------------------ adaptive pooling

def _bounds(i, o):
    """PyTorch's adaptive windows: [floor(j*i/o), ceil((j+1)*i/o)) for output j."""
    j = np.arange(o)
    return (j * i) // o, -((-(j + 1) * i) // o)


def _avg_matrix(i, o, dtype):
    start, end = _bounds(i, o)
    cols = np.arange(i)
    mask = (cols >= start[:, None]) & (cols < end[:, None])
    return (mask / (end - start)[:, None]).astype(dtype)


def _even(isize, output_size):
    """The window sizes when every output divides its input (global pooling, 2x): the
    windows then tile the input, and pooling is a reshape and a mean."""
    if all(o > 0 and i % o == 0 for i, o in zip(isize, output_size)):
        return tuple(i // o for i, o in zip(isize, output_size))
    return None


def _adaptive_avg_np(n, x, output_size):
    xc = x.astype(np.float32) if _low(x) else x
    win = _even(x.shape[x.ndim - n:], output_size)
    if win is not None and x.size:
        split = sum(((o, w) for o, w in zip(output_size, win)), ())
        r = xc.reshape(x.shape[:x.ndim - n] + split)
        r = r.mean(tuple(range(x.ndim - n + 1, x.ndim + n, 2)))
        return r.astype(x.dtype, copy=False)
    for k in range(n):
        axis = x.ndim - n + k
        m = _avg_matrix(x.shape[axis], output_size[k], xc.dtype)
        xc = np.moveaxis(np.moveaxis(xc, axis, -1) @ m.T, -1, axis)
    return np.ascontiguousarray(xc).astype(x.dtype, copy=False)


def _check_adaptive(name, n, x, output_size):
    if len(output_size) != n:
        raise RuntimeError(f"{name}: output_size must be {n}")
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got "
                           f"{list(x.shape)}")
    for d in range(1, x.ndim):
        if x.shape[d] == 0 and (x.ndim == n + 1 or d > 0):
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(x.shape)} with "
                               f"dimension {d} being empty")
    if any(o < 0 for o in output_size):
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                           "to 0 but received {" + ", ".join(map(str, output_size)) + "}")
    if x.dtype._kind != 2:
        raise NotImplementedError(f"\"{name}\" not implemented for '{type_name(x.dtype)}'")


def _adaptive_avg_meta(n):
    def meta(x, output_size):
        _check_adaptive(f"adaptive_avg_pool{n}d", n, x, output_size)
        return tuple(x.shape[:-n]) + tuple(output_size), x.dtype
    return meta


def _adaptive_avg_vjp(n):
    def vjp(ctx, grad):
        from .creation import tensor
        isize = ctx.shapes[0][-n:]
        win = _even(isize, grad.shape[grad.dim() - n:])
        if win is not None:     # each input gets its window's grad / window size
            lead = tuple(grad.shape[:grad.dim() - n])
            osize = tuple(grad.shape[grad.dim() - n:])
            g = (grad / math.prod(win)).reshape(lead + sum(((o, 1) for o in osize), ()))
            g = g.expand(lead + sum(((o, w) for o, w in zip(osize, win)), ()))
            return g.reshape(lead + tuple(isize)), None
        g = grad
        for k in range(n):
            axis = grad.dim() - n + k
            m = tensor(_avg_matrix(isize[k], grad.shape[axis], np.float64), dtype=grad.dtype)
            g = (g.movedim(axis, -1) @ m).movedim(-1, axis)
        return g, None
    return vjp


def _adaptive_avg_decomp(n):
    """Each pooled dim: a matmul with the (out, in) averaging matrix, built from iota:
    row i averages [floor(i in / out), ceil((i + 1) in / out))."""
    def decomp(x, output_size):
        from .. import _prims as P
        for k, m in enumerate(output_size):
            d = x.dim() - n + k
            size = x.shape[d]
            i = P.arange(0, 1, m, D.int64)
            start = P.floor_divide(P.mul(i, size), m)
            end = P.floor_divide(P.add(P.mul(P.add(i, 1), size), m - 1), m)
            j = P.unsqueeze(P.arange(0, 1, size, D.int64), 0)
            inside = P.logical_and(P.ge(j, P.unsqueeze(start, 1)), P.lt(j, P.unsqueeze(end, 1)))
            w = P.reciprocal(P._to_copy(P.unsqueeze(P.sub(end, start), 1), x.dtype))
            wt = P.permute(P.where(inside, w, P.full((), 0, x.dtype)), [1, 0])   # (in, out)
            order = list(range(x.dim()))
            order[d], order[-1] = order[-1], order[d]
            x = P.permute(P.matmul(P.permute(x, order), wt), order)
        return P.clone(x, None)
    return decomp


ADAPTIVE_AVG2D = register("_adaptive_avg_pool2d", lambda x, o: _adaptive_avg_np(2, x, o),
                          meta=_adaptive_avg_meta(2), vjp=_adaptive_avg_vjp(2), save=(),
                          decomp=_adaptive_avg_decomp(2),
                          check=True, tags=("reduction",),
                          schema="_adaptive_avg_pool2d(Tensor self, "
                                 "SymInt[2] output_size) -> Tensor")
ADAPTIVE_AVG3D = register("_adaptive_avg_pool3d", lambda x, o: _adaptive_avg_np(3, x, o),
                          meta=_adaptive_avg_meta(3), vjp=_adaptive_avg_vjp(3), save=(),
                          decomp=_adaptive_avg_decomp(3),
                          check=True, tags=("reduction",), amp_policy="fp32",
                          schema="_adaptive_avg_pool3d(Tensor self, "
                                 "SymInt[3] output_size) -> Tensor")


def adaptive_avg_pool(input, n, output_size):
    """aten::_adaptive_avg_pool{2,3}d."""
    return dispatch(ADAPTIVE_AVG2D if n == 2 else ADAPTIVE_AVG3D, (input, list(output_size)))


def _adaptive_max_np(n, x, output_size):
    isize = x.shape[-n:]
    inds, idx = [], []
    for k, (i, o) in enumerate(zip(isize, output_size)):
        start, end = _bounds(i, o)
        kmax = int((end - start).max()) if o else 1
        ind = np.minimum(start[:, None] + np.arange(kmax), end[:, None] - 1)   # (o, kmax)
        shape = [1] * (2 * n)
        shape[k], shape[n + k] = o, kmax
        inds.append(ind)
        idx.append(ind.reshape(shape))
    xc = x.astype(np.float32) if _low(x) else x
    g = xc[(Ellipsis,) + tuple(idx)]                          # (..., *out, *kmax)
    g = g.reshape(g.shape[:x.ndim] + (math.prod(ind.shape[1] for ind in inds),))
    arg = np.argmax(g, axis=-1) if g.size else np.zeros(g.shape[:-1], np.int64)
    val = np.take_along_axis(g, arg[..., None], -1)[..., 0].astype(x.dtype) if g.size else \
        np.zeros(g.shape[:-1], x.dtype)
    pos = np.unravel_index(arg, [ind.shape[1] for ind in inds])
    coords = []
    for k in range(n):      # the input coordinate, along dim k, of each window's argmax
        out_k = np.arange(output_size[k]).reshape((-1,) + (1,) * (n - 1 - k))
        coords.append(inds[k][out_k, pos[k]])
    flat = np.ravel_multi_index(coords, isize) if val.size else np.zeros(val.shape, np.int64)
    return val, flat.astype(np.int64)


def _adaptive_max_meta(n):
    def meta(x, output_size):
        _check_adaptive(f"adaptive_max_pool{n}d", n, x, output_size)
        shape = tuple(x.shape[:-n]) + tuple(output_size)
        return (shape, x.dtype), (shape, D.int64)
    return meta


def _adaptive_max_vjp(n):
    def vjp(ctx, grad, _gi=None):
        return max_pool_backward(grad, ctx.out[1], ctx.shapes[0], n), None
    return vjp


ADAPTIVE_MAX2D = register("adaptive_max_pool2d", lambda x, o: _adaptive_max_np(2, x, o),
                          meta=_adaptive_max_meta(2), vjp=_adaptive_max_vjp(2), save=(),
                          save_out=True, nondiff_outputs=(1,), check=True,
                          tags=("prim", "reduction"),
                          schema="adaptive_max_pool2d(Tensor self, "
                                 "int[2] output_size) -> (Tensor, Tensor)")
ADAPTIVE_MAX3D = register("adaptive_max_pool3d", lambda x, o: _adaptive_max_np(3, x, o),
                          meta=_adaptive_max_meta(3), vjp=_adaptive_max_vjp(3), save=(),
                          save_out=True, nondiff_outputs=(1,), check=True,
                          tags=("prim", "reduction"), amp_policy="fp32",
                          schema="adaptive_max_pool3d(Tensor self, "
                                 "int[3] output_size) -> (Tensor, Tensor)")


def adaptive_max_pool(input, n, output_size):
    """aten::adaptive_max_pool{2,3}d: (values, flat spatial indices)."""
    return dispatch(ADAPTIVE_MAX2D if n == 2 else ADAPTIVE_MAX3D, (input, list(output_size)))


# ------------------------------------------------------------------ max unpooling

def _unpool_np(x, indices, output_size, *_):
    n = len(output_size)
    lead = x.shape[:-n]
    rows = math.prod(lead)
    total = math.prod(output_size)
    idx = indices.reshape(rows, -1)
    if idx.size and (idx.min() < 0 or idx.max() >= total):
        bad = idx[(idx < 0) | (idx >= total)][0]
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{_x(output_size)}")
    out = np.zeros((rows, total), x.dtype)
    np.put_along_axis(out, idx, x.reshape(rows, -1), axis=1)
    return out.reshape(lead + tuple(output_size))


def _unpool_meta(n):
    name = f"max_unpool{n}d"

    def meta(x, indices, output_size, *rest):
        if indices.dtype is not D.int64:
            raise RuntimeError(f"elements in indices should be type int64 but got: "
                               f"{type_name(indices.dtype)}")
        if len(output_size) != n:
            raise RuntimeError(f"There should be exactly {n} elements (depth, height, width) in "
                               f"output_size, but got {len(output_size)} elements." if n == 3
                               else f"There should be exactly two elements (height, width) in "
                               f"output_size, but got {len(output_size)} elements.")
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"Input to {name} should be a {n + 1}d or {n + 2}d Tensor, but "
                               f"got a tensor with {x.ndim} dimensions.")
        if tuple(x.shape) != tuple(indices.shape):
            raise RuntimeError(f"Expected shape of indices to be same as that of the input "
                               f"tensor ({list(x.shape)}) but got indices tensor with shape: "
                               f"{list(indices.shape)}")
        for d in range(1, x.ndim):
            if x.shape[d] <= 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for "
                                   f"non-batch dimensions, but got {list(x.shape)} with "
                                   f"dimension {d} being empty.")
        return tuple(x.shape[:-n]) + tuple(output_size), x.dtype
    return meta


def _unpool_vjp(n):
    def vjp(ctx, grad):
        _, indices = ctx.args[:2]
        shape = ctx.shapes[0]
        rows, cols = math.prod(shape[:-n]), math.prod(shape[-n:])
        g = grad.reshape(rows, math.prod(grad.shape[-n:])).gather(
            1, indices.reshape(rows, cols)).reshape(tuple(shape))
        return (g,) + (None,) * (len(ctx.args) - 1)
    return vjp


def _unpool_decomp(n):
    """scatter the values into zeros at their flat spatial indices, per (batch, channel)."""
    def decomp(x, indices, output_size, stride=None, padding=None):
        from .. import _prims as P
        lead = list(x.shape[:x.dim() - n])
        flat = lead + [-1]
        out = P.full(lead + [math.prod(output_size)], 0, x.dtype)
        out = P.scatter(out, len(lead), P._reshape_copy(indices, flat),
                        P._reshape_copy(x, flat), None)
        return P.view(out, lead + list(output_size))
    return decomp


MAX_UNPOOL2D = register("max_unpool2d", _unpool_np, meta=_unpool_meta(2), vjp=_unpool_vjp(2),
                        save=(1,), check=True, tags=("scatter",), amp_policy="fp32",
                        decomp=_unpool_decomp(2),
                        schema="max_unpool2d(Tensor self, Tensor indices, "
                               "SymInt[2] output_size) -> Tensor")
MAX_UNPOOL3D = register("max_unpool3d", _unpool_np, meta=_unpool_meta(3), vjp=_unpool_vjp(3),
                        save=(1,), check=True, tags=("scatter",), amp_policy="fp32",
                        decomp=_unpool_decomp(3),
                        schema="max_unpool3d(Tensor self, Tensor indices, SymInt[3] output_size, "
                               "int[3] stride, int[3] padding) -> Tensor")


def max_unpool(input, indices, output_size, stride=None, padding=None):
    """aten::max_unpool2d(input, indices, output_size) / max_unpool3d(..., stride, padding)."""
    if len(output_size) == 2:
        return dispatch(MAX_UNPOOL2D, (input, indices, list(output_size)))
    return dispatch(MAX_UNPOOL3D, (input, indices, list(output_size), list(stride),
                                   list(padding)))


# ------------------------------------------------------------------ padding

def _constant_pad_np(x, pad, value):
    out_shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        left, right, size = pad[2 * i], pad[2 * i + 1], x.shape[d]
        out_shape[d] = size + left + right
        n = size - max(-left, 0) - max(-right, 0)
        src[d] = slice(max(-left, 0), max(-left, 0) + max(n, 0))
        dst[d] = slice(max(left, 0), max(left, 0) + max(n, 0))
    out = np.full(out_shape, value, dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _constant_pad_meta(x, pad, value):
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)} while the input "
                           f"has {x.ndim} dimensions.")
    shape = list(x.shape)
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        new = shape[d] + pad[2 * i] + pad[2 * i + 1]
        if new < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding "
                               f"{pad[2 * i]} and {pad[2 * i + 1]} resulted in a negative "
                               f"output size, which is invalid. Check dimension {d} of your "
                               "input.")
        shape[d] = new
    return tuple(shape), x.dtype


def _constant_pad_vjp(ctx, grad):
    _, pad, _ = ctx.args
    return constant_pad_nd(grad, [-p for p in pad], 0), None, None


def _constant_pad_decomp(x, pad, value=0):
    """Per padded dim (last first): slice off negative pads, cat full blocks for positive."""
    from .. import _prims as P
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = x.shape[d]
        if lo < 0 or hi < 0:
            x = P.slice(x, d, max(-lo, 0), n + min(hi, 0), 1)
        shape = list(x.shape)
        parts = [x]
        if lo > 0:
            parts.insert(0, P.full(shape[:d] + [lo] + shape[d + 1:], value, x.dtype))
        if hi > 0:
            parts.append(P.full(shape[:d] + [hi] + shape[d + 1:], value, x.dtype))
        if len(parts) > 1:
            x = P.cat(parts, d)
    return x


CONSTANT_PAD = register("constant_pad_nd", _constant_pad_np, meta=_constant_pad_meta,
                        vjp=_constant_pad_vjp, save=(), check=True, tags=("shape",),
                        decomp=_constant_pad_decomp,
                        schema="constant_pad_nd(Tensor self, SymInt[] pad, "
                               "Scalar value=0) -> Tensor")


def constant_pad_nd(input, pad, value=0):
    """torch.constant_pad_nd: pad (or, with negative pads, crop) the last len(pad)//2 dims."""
    return dispatch(CONSTANT_PAD, (input, [int(p) for p in pad], value))


def _pad_indices(size, left, right, mode):
    i = np.arange(-left, size + right)
    if mode == "reflect":
        i = np.abs(i)
        return np.where(i >= size, 2 * (size - 1) - i, i)
    return np.clip(i, 0, size - 1)


def _index_pad_np(mode, n):
    def kernel(x, padding):
        for i in range(n):
            axis = x.ndim - 1 - i
            x = np.take(x, _pad_indices(x.shape[axis], padding[2 * i], padding[2 * i + 1],
                                        mode), axis=axis)
        return x
    return kernel


def _index_pad_meta(mode, n):
    name = f"{'reflection' if mode == 'reflect' else 'replication'}_pad{n}d"

    def meta(x, padding):
        if len(padding) != 2 * n:
            raise RuntimeError(f"padding size is expected to be {2 * n}, but got: "
                               f"{len(padding)}")
        if not _valid_pad_input(x, n):
            raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                               "possibly 0 batch size and other non-zero dimensions for "
                               f"input, but got: {list(x.shape)}")
        shape = list(x.shape)
        for i in range(n):
            d = x.ndim - 1 - i
            left, right = padding[2 * i], padding[2 * i + 1]
            if mode == "reflect" and (left >= shape[d] or right >= shape[d]):
                raise RuntimeError(f"Argument #4: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding ({left}, "
                                   f"{right}) at dimension {d} of input {list(x.shape)}")
            new = shape[d] + left + right
            if new < 1:
                raise RuntimeError(f"input (W: {shape[d]}) is too small. Calculated output W: "
                                   f"{new}")
            shape[d] = new
        if x.dtype is D.bool:
            raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
        return tuple(shape), x.dtype
    return meta


def _valid_pad_input(x, n):
    if x.ndim not in (n + 1, n + 2):
        return False
    start = 1 if x.ndim == n + 2 else 0
    return all(s != 0 for s in x.shape[start:])


def _index_pad_vjp(mode, n):
    def vjp(ctx, grad):
        from .creation import tensor, zeros
        _, padding = ctx.args
        shapes = [tuple(ctx.shapes[0])]
        for i in range(n):
            axis = len(shapes[0]) - 1 - i
            s = list(shapes[-1])
            s[axis] += padding[2 * i] + padding[2 * i + 1]
            shapes.append(tuple(s))
        g = grad
        for i in reversed(range(n)):
            axis = len(shapes[0]) - 1 - i
            size = shapes[i][axis]
            idx = tensor(_pad_indices(size, padding[2 * i], padding[2 * i + 1], mode),
                         dtype=D.int64)
            g = zeros(shapes[i], dtype=grad.dtype).index_add(axis, idx, g)
        return g, None
    return vjp


def _index_pad_decomp(mode, n):
    """Each padded dim: index_select with source positions computed from iota
    (reflect: n-1 - |n-1 - |j||, replicate: j clamped to [0, n-1], j = out - left)."""
    def decomp(x, padding):
        from .. import _prims as P
        for i in range(n):
            d = x.dim() - 1 - i
            lo, hi = padding[2 * i], padding[2 * i + 1]
            size = x.shape[d]
            j = P.arange(-lo, 1, size + lo + hi, D.int64)
            if mode == "reflect":
                idx = P.sub(size - 1, P.abs(P.sub(size - 1, P.abs(j))))
            else:
                idx = P.minimum(P.maximum(j, 0), size - 1)
            x = P.index_select(x, d, idx)
        return x
    return decomp


_PADS = {}
for _mode, _prefix in (("reflect", "reflection"), ("replicate", "replication")):
    for _n in (1, 2, 3):
        _fp32 = (_mode == "replicate") or _n < 3
        _PADS[_mode, _n] = register(
            f"{_prefix}_pad{_n}d", _index_pad_np(_mode, _n), meta=_index_pad_meta(_mode, _n),
            vjp=_index_pad_vjp(_mode, _n), save=(), check=True, tags=("gather",),
            decomp=_index_pad_decomp(_mode, _n),
            amp_policy="fp32" if _fp32 else "none",
            schema=f"{_prefix}_pad{_n}d(Tensor self, SymInt[{2 * _n}] padding) -> Tensor")


def index_pad(input, padding, mode):
    """aten::reflection_pad{1,2,3}d / replication_pad{1,2,3}d; mode 'reflect'/'replicate'."""
    return dispatch(_PADS[mode, len(padding) // 2], (input, [int(p) for p in padding]))
