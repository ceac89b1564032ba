"""Convolution primitives: `convolution` (1/2/3-d, grouped, strided, dilated, transposed)
and `im2col`/`col2im` (the kernels of F.unfold and F.fold).

Note: the forward kernel is im2col: a strided window view of the zero-padded input
(`sliding_window_view`, no copy) is gathered once into a column matrix per group and
multiplied by the weight in one batched `np.matmul` over the groups. The transposed
kernel multiplies first and then scatters the columns back with col2im, whose loop
runs over the kernel's offsets (9 for a 3x3 kernel), never over output pixels.
Half precision is computed in float32 and rounded once.

The vjps are convolutions themselves (PyTorch's formulas): grad_input is the
transposed convolution of grad (and vice versa), grad_weight is a convolution of the
input with grad (batch and channel axes swapped, stride and dilation exchanged), and
grad_bias a sum, so double backward works. im2col and col2im are each other's adjoint.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import _dtype as D
from .._dispatch import dispatch
from ._composite import decomp_vjp
from ._elementwise import type_name
from ._lowp import cast
from ._registry import register
from .matmul import _C10

__all__ = ["convolution"]


# ---------------------------------------------------------------- array helpers

def _pad(x, padding):
    """x zero-padded by padding[i] on both sides of its last len(padding) dims."""
    if not any(padding):
        return x
    n = len(padding)
    sp = x.shape[-n:]
    out = np.zeros(x.shape[:-n] + tuple(s + 2 * p for s, p in zip(sp, padding)), x.dtype)
    out[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, sp))] = x
    return out


def _crop(x, padding, size):
    """The inverse of _pad: the central `size` of x's last len(padding) dims."""
    if not any(padding):
        return x
    return x[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(padding, size))]


def _windows(xp, kernel, dilation, stride):
    """View (..., *out, *kernel) of the sliding windows over xp's last len(kernel) dims."""
    n = len(kernel)
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    w = sliding_window_view(xp, span, axis=tuple(range(xp.ndim - n, xp.ndim)))
    return w[(Ellipsis,) + tuple(slice(None, None, s) for s in stride)
             + tuple(slice(None, None, d) for d in dilation)]


def _col2im(cols, nlead, kernel, padded_size, dilation, stride):
    """Scatter-add cols (*lead, *kernel, *blocks) into zeros (*lead, *padded_size)."""
    lead = cols.shape[:nlead]
    blocks = cols.shape[nlead + len(kernel):]
    out = np.zeros(lead + tuple(padded_size), cols.dtype)
    pre = (slice(None),) * nlead
    for off in np.ndindex(*kernel):
        region = tuple(slice(o * d, o * d + s * (b - 1) + 1, s)
                       for o, d, s, b in zip(off, dilation, stride, blocks))
        out[pre + region] += cols[pre + off]
    return out


def _low_precision(a):
    return a.dtype == np.float16 or a.dtype == D.bfloat16.np


# ---------------------------------------------------------------- convolution

def _conv_kernel(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    dt = x.dtype
    if _low_precision(x):
        x, w = cast(x, np.float32), cast(w, np.float32)
        b = None if b is None else b.astype(np.float32)
    n = x.ndim - 2
    if transposed:
        out = _conv_transposed(x, w, tuple(stride), tuple(padding), tuple(dilation),
                               tuple(output_padding), groups)
    else:
        out = _conv_forward(x, w, tuple(stride), tuple(padding), tuple(dilation), groups)
    if b is not None:
        out += b.astype(out.dtype, copy=False).reshape((1, -1) + (1,) * n)
    return cast(out, dt, copy=False)


def _conv_forward(x, w, stride, padding, dilation, groups):
    """im2col + one batched matmul over images and groups."""
    N, C = x.shape[:2]
    n = x.ndim - 2
    O, kernel = w.shape[0], w.shape[2:]
    Cg, Og = C // groups, O // groups
    if Cg == 1:         # depthwise: a multiply-add per kernel offset, no column matrix
        return _depthwise(x, w, stride, padding, dilation, groups, False, None)
    win = _windows(_pad(x, padding), kernel, dilation, stride)     # (N, C, *out, *k)
    osize = win.shape[2:2 + n]
    P, K = int(np.prod(osize)), int(np.prod(kernel))
    win = win.reshape((N, groups, Cg) + win.shape[2:])
    out_axes, k_axes = tuple(range(3, 3 + n)), tuple(range(3 + n, 3 + 2 * n))
    if K > P and N * Og <= 8:
        # few images x outputs per group, big kernel, few positions: the weight gradient
        # of a depthwise/grouped conv. One contraction per output position straight from
        # the window view; the batched matmul would gather every window into a copy
        ks = "xyz"[:n]
        spec = f"ngc{ks},goc{ks}->ngo"
        wk = w.reshape((groups, Og, Cg) + tuple(kernel))
        out = np.empty((N, groups, Og) + osize, np.result_type(x, w))
        for pos in np.ndindex(*osize):
            out[(Ellipsis,) + pos] = np.einsum(spec, win[(slice(None),) * 3 + pos], wk)
        return out.reshape((N, O) + osize)
    wm = w.reshape(groups, Og, Cg * K)
    # the gather's innermost axis runs along the longer of (output positions, kernel),
    # the one that follows the source rows: the kernel for weight-gradient convolutions
    if K > P:
        cols = win.transpose((1, 0) + out_axes + (2,) + k_axes).reshape(groups, N * P, Cg * K)
        res = np.matmul(cols, wm.transpose(0, 2, 1))              # (g, N*P, Og)
        res = res.reshape((groups, N, P, Og)).transpose(1, 0, 3, 2)
    else:       # one (Og, Cg*K) @ (Cg*K, P) product per image and group, in output layout
        perm = (0, 1, 2) + k_axes + out_axes
        res = np.empty((N, groups, Og, P), np.result_type(x, w))
        step = _chunk(groups * Cg * K * P, N)
        for i in range(0, N, step):     # gather a cache-sized chunk of images, multiply it
            part = win[i:i + step]
            cols = part.transpose(perm).reshape(part.shape[0], groups, Cg * K, P)
            np.matmul(wm, cols, out=res[i:i + step])
    return np.ascontiguousarray(res).reshape((N, O) + osize)


def _chunk(per_image, n, budget=1 << 18):
    """Images per chunk so that one chunk's column matrix (per_image elements each) stays
    near `budget` elements (1 MiB of float32): the gather and the product that reads it
    then run in cache, and the columns never exist for the whole batch at once."""
    return max(1, min(n, budget // max(per_image, 1)))


def _conv_transposed(x, w, stride, padding, dilation, output_padding, groups):
    """One batched matmul to columns (N, g, Og*K, P), then col2im into the output."""
    N, C = x.shape[:2]
    isize, kernel = x.shape[2:], w.shape[2:]
    Cg, Og = C // groups, w.shape[1]
    P, K = int(np.prod(isize)), int(np.prod(kernel))
    osize = _transposed_size(isize, kernel, stride, padding, dilation, output_padding)
    padded = tuple(o + 2 * p for o, p in zip(osize, padding))
    if Cg == 1:         # depthwise: scatter a product per kernel offset, no column matrix
        return _depthwise(x, w, stride, padding, dilation, groups, True, osize)
    wm = np.ascontiguousarray(w.reshape(groups, Cg, Og * K).transpose(0, 2, 1))
    if all(s == 1 for s in stride):
        return _conv_transposed_s1(x, wm, kernel, padding, dilation, osize, padded, groups)
    cols = np.matmul(wm, x.reshape(N, groups, Cg, P))                # (N, g, Og*K, P)
    cols = cols.reshape((N, groups, Og) + kernel + isize)
    out = _col2im(cols, 3, kernel, padded, dilation, stride)
    out = _crop(out, padding, osize)
    return np.ascontiguousarray(out).reshape((N, groups * Og) + osize)


def _conv_transposed_s1(x, wm, kernel, padding, dilation, osize, padded, groups):
    """Stride-1 transposed convolution without col2im's strided scatter: the input is
    widened with zeros to the padded output's row lengths, so that each kernel offset's
    columns land on one contiguous run of the flattened padded output (a fixed shift);
    the zero margins absorb the wrap-around. Images go in cache-sized chunks."""
    N = x.shape[0]
    n = len(kernel)
    isize = x.shape[2:]
    Cg, OgK = wm.shape[2], wm.shape[1]
    Og, K = OgK // int(np.prod(kernel)), int(np.prod(kernel))
    wide = (isize[0],) + tuple(padded[1:])          # the input on the padded grid's rows
    L = int(np.prod(wide))
    pstride = [int(np.prod(padded[i + 1:])) for i in range(n)]
    shifts = [sum(o * d * ps for o, d, ps in zip(off, dilation, pstride))
              for off in np.ndindex(*kernel)]
    total = int(np.prod(padded))
    dt = np.result_type(x, wm)
    out = np.zeros((N, groups, Og, max(total, max(shifts) + L)), dt)
    if wide == tuple(isize):
        xw = x.reshape(N, groups, Cg, L)
    else:
        xw = np.zeros((N, groups, Cg) + wide, dt)
        xw[(Ellipsis,) + tuple(slice(0, i) for i in isize)] = \
            x.reshape((N, groups, Cg) + tuple(isize))
        xw = xw.reshape(N, groups, Cg, L)
    step = _chunk(groups * OgK * L, N)
    for i in range(0, N, step):
        part = xw[i:i + step]
        cols = np.matmul(wm, part).reshape(part.shape[0], groups, Og, K, L)
        o = out[i:i + step]
        for k, sh in enumerate(shifts):
            o[..., sh:sh + L] += cols[:, :, :, k]
    out = out[..., :total].reshape((N, groups * Og) + tuple(padded))
    out = _crop(out, padding, osize)
    return np.ascontiguousarray(out)


def _depthwise(x, w, stride, padding, dilation, groups, transposed, osize):
    """Depthwise (one input channel per group) convolution or its transpose: one multiply
    and one add per kernel offset. Narrow images run channels last, so that NumPy's inner
    loop spans all channels rather than a few pixels of one; wide ones stay channels first
    (their rows are long enough, and the two layout transposes would cost more)."""
    N = x.shape[0]
    isize, kernel = x.shape[2:], w.shape[2:]
    Og = w.shape[0] // groups if not transposed else w.shape[1]
    dt = np.result_type(x, w)
    if Og == 1 and all(s == 1 for s in stride):
        if not transposed:
            return _depthwise_s1(x, w, padding, dilation)
        # stride 1: the transpose is the forward convolution with the flipped kernel
        back = tuple(d * (k - 1) - p for k, d, p in zip(kernel, dilation, padding))
        if min(back) >= 0 and tuple(osize) == tuple(
                i + d * (k - 1) - 2 * p for i, k, d, p in zip(isize, kernel, dilation, padding)):
            flip = w[(slice(None), slice(None)) + (slice(None, None, -1),) * len(kernel)]
            return _depthwise_s1(x, flip, back, dilation)
    if not transposed:
        osize = _forward_size(isize, kernel, stride, padding, dilation)
    last = isize[-1] <= 16
    # channel axes: (group, multiplier), or the group alone when the multiplier is 1
    co = (groups, Og) if Og > 1 else (groups,)
    wk = w.reshape((groups, Og) + kernel)
    if last:
        wk = np.ascontiguousarray(np.moveaxis(wk, (0, 1), (-2, -1))).reshape(kernel + co)
        xl = np.moveaxis(x, 1, -1)                                   # (N, *in, g)
    else:
        wk = np.moveaxis(wk, tuple(range(2, 2 + len(kernel))), tuple(range(len(kernel))))
        wk = wk.reshape(kernel + co + (1,) * len(kernel))
        xl = x
    sp = (slice(None),) * (1 if last else 1 + len(co))              # axes before spatial
    one = (lambda a: a[..., None]) if last else (lambda a: a[:, :, None])

    def region(off, size):
        return sp + tuple(slice(o * d, o * d + s * (b - 1) + 1, s)
                          for o, d, s, b in zip(off, dilation, stride, size))

    def shape(spatial):
        return (N,) + tuple(spatial) + co if last else (N,) + co + tuple(spatial)
    if transposed:
        xl = np.ascontiguousarray(xl)
        xl = one(xl) if Og > 1 else xl
        padded = tuple(o + 2 * p for o, p in zip(osize, padding))
        out = np.zeros(shape(padded), dt)
        tmp = np.empty(shape(isize), dt)
        for off in np.ndindex(*kernel):
            out[region(off, isize)] += np.multiply(xl, wk[off], out=tmp)
        out = out[sp + tuple(slice(p, p + o) for p, o in zip(padding, osize))]
    else:
        padded = tuple(i + 2 * p for i, p in zip(isize, padding))
        xp = np.zeros((N,) + padded + (groups,) if last else (N, groups) + padded, dt)
        xp[(slice(None),) * (1 if last else 2)
           + tuple(slice(p, p + i) for p, i in zip(padding, isize))] = xl
        xp = one(xp) if Og > 1 else xp
        out = np.zeros(shape(osize), dt)
        tmp = np.empty_like(out)
        for off in np.ndindex(*kernel):
            out += np.multiply(xp[region(off, osize)], wk[off], out=tmp)
    if last:
        out = np.moveaxis(out.reshape((N,) + tuple(osize) + (groups * Og,)), -1, 1)
    return np.ascontiguousarray(out).reshape((N, groups * Og) + tuple(osize))


def _depthwise_s1(x, w, padding, dilation):
    """Stride-1 depthwise convolution (one input and one output channel per group) on
    the flattened padded image: each kernel offset is one contiguous shifted run per
    channel, so NumPy's inner loops span whole images instead of one output row; the
    output is computed on the padded grid's row length and cropped once at the end."""
    N, C = x.shape[:2]
    n = x.ndim - 2
    isize, kernel = x.shape[2:], w.shape[2:]
    padded = tuple(i + 2 * p for i, p in zip(isize, padding))
    osize = tuple(q - d * (k - 1) for q, k, d in zip(padded, kernel, dilation))
    dt = np.result_type(x, w)
    if min(osize) <= 0 or N * C == 0:
        return np.zeros((N, C) + tuple(max(o, 0) for o in osize), dt)
    pstride = [int(np.prod(padded[i + 1:])) for i in range(n)]
    shifts = [sum(o * d * ps for o, d, ps in zip(off, dilation, pstride))
              for off in np.ndindex(*kernel)]
    wide = (osize[0],) + padded[1:]
    L = int(np.prod(wide))
    total = int(np.prod(padded))
    buf = np.zeros((N, C, max(total, max(shifts) + L)), dt)
    buf[..., :total].reshape((N, C) + padded)[
        (Ellipsis,) + tuple(slice(p, p + i) for p, i in zip(padding, isize))] = x
    wk = w.reshape(C, -1).astype(dt, copy=False)
    out = np.empty((N, C, L), dt)
    tmp = np.empty_like(out)
    for k, sh in enumerate(shifts):
        if k == 0:
            np.multiply(buf[..., sh:sh + L], wk[:, k:k + 1], out=out)
        else:
            out += np.multiply(buf[..., sh:sh + L], wk[:, k:k + 1], out=tmp)
    out = out.reshape((N, C) + wide)[(Ellipsis,) + tuple(slice(0, o) for o in osize)]
    return np.ascontiguousarray(out)


def _transposed_size(isize, kernel, stride, padding, dilation, output_padding):
    return tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, k, s, p, d, op in
                 zip(isize, kernel, stride, padding, dilation, output_padding))


def _forward_size(isize, kernel, stride, padding, dilation):
    return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                 for i, k, s, p, d in zip(isize, kernel, stride, padding, dilation))


def _expand(name, value, n):
    value = list(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           "values to match the convolution dimensions, but got "
                           f"{name}={value}")
    return value


def _sizes(t):
    return list(t.shape)


def _x(sizes):
    return " x ".join(str(s) for s in sizes)


def _named(label, values):
    names = ("depth", "height", "width")[3 - len(values):] if len(values) <= 3 else \
        [str(i) for i in range(len(values))]
    return " ".join(f"{label}_{nm}: {v}" for nm, v in zip(names, values))


def _conv_meta(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """PyTorch's argument checks (Convolution.cpp's check_shape_forward and the
    backends' shape checks), in its order; returns the output's (shape, dtype)."""
    if w.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    n = w.ndim - 2
    stride = _expand("stride", stride, n)
    padding = _expand("padding", padding, n)
    dilation = _expand("dilation", dilation, n)
    output_padding = _expand("output_padding", output_padding, n)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if 0 in dilation and all(d >= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {dilation}")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    ws = _sizes(w)
    if x.ndim != w.ndim:
        raise RuntimeError(f"Expected {w.ndim}-dimensional input for {w.ndim}-dimensional "
                           f"weight {ws}, but got {x.ndim}-dimensional input of size "
                           f"{_sizes(x)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} "
                           f"at dimension 0, but got weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size [{ws}] instead")
    isize, kernel = tuple(x.shape[2:]), tuple(ws[2:])
    if not transposed:
        if x.shape[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input"
                               f"{_sizes(x)} to have {ws[1] * groups} channels, but got "
                               f"{x.shape[1]} channels instead")
        if b is not None and (b.ndim != 1 or b.shape[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {ws}, expected bias to be 1-dimensional "
                               f"with {ws[0]} elements, but got bias of size {_sizes(b)} "
                               "instead")
        padded = [i + 2 * p for i, p in zip(isize, padding)]
        span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        if any(p < s for p, s in zip(padded, span)):
            raise RuntimeError(f"Calculated padded input size per channel: ({_x(padded)}). "
                               f"Kernel size: ({_x(span)}). Kernel size can't be greater "
                               "than actual input size")
        osize = _forward_size(isize, kernel, stride, padding, dilation)
        out_channels = ws[0]
    else:
        if x.shape[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input"
                               f"{_sizes(x)} to have {ws[0]} channels, but got {x.shape[1]} "
                               "channels instead")
        out_channels = ws[1] * groups
        if b is not None and (b.ndim != 1 or b.shape[0] != out_channels):
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected bias to be "
                               f"1-dimensional with {out_channels} elements, but got bias of "
                               f"size {_sizes(b)} instead")
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            pads = output_padding if n > 1 else [0] + output_padding
            strides = stride if n > 1 else [1] + stride
            dils = dilation if n > 1 else [1] + dilation
            raise RuntimeError("output padding must be smaller than either stride or "
                               f"dilation, but got {_named('output_padding', pads)} "
                               f"{_named('stride', strides)} {_named('dilation', dils)}")
        osize = _transposed_size(isize, kernel, stride, padding, dilation, output_padding)
        if any(o < 1 for o in osize):
            ins = isize if n > 1 else (1,) + isize
            outs = osize if n > 1 else (1,) + osize
            raise RuntimeError(f"Given input size per channel: ({_x(ins)}). Calculated "
                               f"output size per channel: ({_x(outs)}). Output size is too "
                               "small")
    _check_dtypes(x, w, b, n, transposed, dilation)
    return (x.shape[0], out_channels) + tuple(osize), x.dtype


def _check_dtypes(x, w, b, n, transposed, dilation):
    if w.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                           f"{type_name(w.dtype)}")
    if b is not None and b.dtype != x.dtype and not transposed:
        raise RuntimeError(f"Input type ({_C10[x.dtype.name]}) and bias type "
                           f"({_C10[b.dtype.name]}) should be the same")
    # bool has no kernel; of the integer types only int64 has dilated and transposed ones
    if x.dtype is D.bool or x.dtype._kind == 1 and x.dtype is not D.int64 and (
            transposed or any(d != 1 for d in dilation)):
        impl = ("slow_conv_transpose3d_out_cpu" if n == 3 else "slow_conv_transpose2d_out_cpu"
                ) if transposed else "slow_conv_dilated<>" if any(d != 1 for d in dilation) \
            else "compute_columns3d" if n == 3 else "slow_conv2d_cpu"
        raise NotImplementedError(f"\"{impl}\" not implemented for '{type_name(x.dtype)}'")


def _conv_vjp(ctx, grad):
    x, w, _, stride, padding, dilation, transposed, output_padding, groups = ctx.args
    need_x, need_w, need_b = ctx.needs_input_grad[:3]
    n = w.ndim - 2
    stride, padding = _expand("stride", stride, n), _expand("padding", padding, n)
    dilation = _expand("dilation", dilation, n)
    kernel, isize = tuple(w.shape[2:]), tuple(x.shape[2:])
    if x.is_complex():
        x, w = x.conj(), w.conj()
    gx = gw = gb = None
    if need_x:
        if transposed:
            gx = convolution(grad, w, None, stride, padding, dilation, False, [0] * n, groups)
            gx = _narrow_to(gx, isize)
        else:
            gsize = tuple(grad.shape[2:])
            extra = [i - t for i, t in zip(isize, _transposed_size(
                gsize, kernel, stride, padding, dilation, [0] * n))]
            gx = convolution(grad, w, None, stride, padding, dilation, True, extra, groups)
    if need_w:
        inp, gout = (grad, x) if transposed else (x, grad)
        if inp.shape[1] // groups > 1:      # one GEMM over chunks of images
            gw = dispatch(CONV_WEIGHT_GRAD, (inp, gout, list(kernel), stride, padding,
                                             dilation, groups))
        else:       # depthwise: the convolution route has the per-channel kernels
            gw = _weight_grad(inp, gout, kernel, stride, padding, dilation, groups)
    if need_b:
        gb = grad.sum([0] + list(range(2, 2 + n)))
    return gx, gw, gb, None, None, None, None, None, None


def _narrow_to(t, size):
    for i, s in enumerate(size):
        if t.shape[2 + i] != s:
            t = t.narrow(2 + i, 0, s)
    return t


def _weight_grad(inp, gout, kernel, stride, padding, dilation, groups):
    """sum over batch and positions of inp's windows times gout, as a convolution:
    inp (N, g*Ci, *S) becomes a batch of Ci images of g*N channels, gout (N, g*Co, *O)
    a grouped weight (g*Co, N, *O); stride and dilation swap. Returns (g*Co, Ci, *k)."""
    N, kernel = inp.shape[0], tuple(kernel)
    n = len(kernel)
    sp = tuple(range(3, 3 + n))
    ci, co = inp.shape[1] // groups, gout.shape[1] // groups
    a = inp.reshape((N, groups, ci) + tuple(inp.shape[2:])).permute((2, 1, 0) + sp)
    a = a.reshape((ci, groups * N) + tuple(inp.shape[2:]))
    b = gout.reshape((N, groups, co) + tuple(gout.shape[2:])).permute((1, 2, 0) + sp)
    b = b.reshape((groups * co, N) + tuple(gout.shape[2:]))
    r = convolution(a, b, None, dilation, padding, stride, False, [0] * n, groups)
    r = _narrow_to(r, kernel)                                  # (ci, g*co, *k)
    r = r.reshape((ci, groups, co) + kernel).permute((1, 2, 0) + sp)
    return r.reshape((groups * co, ci) + kernel)


def _weight_grad_kernel(inp, gout, kernel, stride, padding, dilation, groups):
    """_weight_grad in NumPy: for cache-sized chunks of images, inp's windows are gathered
    as columns (g, ci*K, images*positions) and gout as rows (g, co, images*positions),
    and one product per chunk accumulates (g, co, ci*K). No transposed copies of the whole
    input and gradient, and the columns never exist for the whole batch."""
    dt = inp.dtype
    if _low_precision(inp):
        inp, gout = cast(inp, np.float32), cast(gout, np.float32)
    kernel = tuple(kernel)
    N, n = inp.shape[0], len(kernel)
    osize = gout.shape[2:]
    ci, co = inp.shape[1] // groups, gout.shape[1] // groups
    P, K = int(np.prod(osize)), int(np.prod(kernel))
    win = _windows(_pad(inp, tuple(padding)), kernel, tuple(dilation), tuple(stride))
    win = win[(slice(None),) * 2 + tuple(slice(0, o) for o in osize)]   # (N, C, *out, *k)
    win = win.reshape((N, groups, ci) + win.shape[2:])
    out_axes, k_axes = tuple(range(3, 3 + n)), tuple(range(3 + n, 3 + 2 * n))
    perm = (1, 2) + k_axes + (0,) + out_axes
    gm = gout.reshape(N, groups, co, P)
    acc = np.zeros((groups, ci * K, co), np.result_type(inp, gout))
    step = _chunk(groups * ci * K * P, N)
    for i in range(0, N, step):
        part = win[i:i + step]
        m = part.shape[0]
        cols = part.transpose(perm).reshape(groups, ci * K, m * P)
        rows = gm[i:i + step].transpose(1, 2, 0, 3).reshape(groups, co, m * P)
        acc += np.matmul(cols, rows.transpose(0, 2, 1))
    acc = np.ascontiguousarray(acc.transpose(0, 2, 1))
    return acc.reshape((groups * co, ci) + kernel).astype(dt, copy=False)


def _weight_grad_meta(inp, gout, kernel, stride, padding, dilation, groups):
    return (gout.shape[1], inp.shape[1] // groups) + tuple(kernel), inp.dtype


CONV_WEIGHT_GRAD = register(
    "convolution_backward_weight", _weight_grad_kernel, meta=_weight_grad_meta,
    vjp=decomp_vjp(_weight_grad), decomp=_weight_grad, tags=("linalg",),
    schema="convolution_backward_weight(Tensor input, Tensor grad_output, SymInt[] kernel_size, "
           "SymInt[] stride, SymInt[] padding, SymInt[] dilation, SymInt groups) -> Tensor")


CONVOLUTION = register("convolution", _conv_kernel, meta=_conv_meta, vjp=_conv_vjp,
                       save=(0, 1), check=True, tags=("prim", "linalg"),
                       amp_policy="lower_precision",
                       schema="convolution(Tensor input, Tensor weight, Tensor? bias, "
                              "SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
                              "bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor")


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """torch.convolution: the n-d (transposed) convolution primitive."""
    return dispatch(CONVOLUTION, (input, weight, bias, list(stride), list(padding),
                                  list(dilation), bool(transposed), list(output_padding),
                                  int(groups)))


# ---------------------------------------------------------- im2col / col2im

def _check_pairs(pairs):
    for name, v in pairs:
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")


def _check_block_params(kernel, dilation, padding, stride):
    """im2col_shape_check / col2im_shape_check: the parameters' signs."""
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           f"kernel_height: {kernel[0]} kernel_width: {kernel[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got "
                           f"stride_height: {stride[0]} stride_width: {stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError("padding should be non-negative, but got "
                           f"pad_height: {padding[0]} pad_width: {padding[1]}")


def _no_integers(x, impl):
    if x.dtype._kind == 1:
        raise NotImplementedError(f"\"{impl}\" not implemented for '{type_name(x.dtype)}'")


def _tup(v):
    return "(" + ", ".join(str(i) for i in v) + ")"


def _im2col_meta(x, kernel_size, dilation, padding, stride):
    _check_pairs((("kernel_size", kernel_size), ("dilation", dilation),
                  ("padding", padding), ("stride", stride)))
    _check_block_params(kernel_size, dilation, padding, stride)
    if x.ndim < 3 and x.ndim > 0:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-x.ndim}, {x.ndim - 1}], but got {x.ndim})")
    if x.ndim not in (3, 4) or 0 in x.shape[-3:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           "and other non-zero dimensions for input, but got: "
                           f"{_sizes(x)}")
    blocks = _forward_size(x.shape[-2:], kernel_size, stride, padding, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {_tup(x.shape[-2:])}, "
                           f"kernel_size={_tup(kernel_size)}, dilation={_tup(dilation)}, "
                           f"padding={_tup(padding)}, calculated shape of the array of "
                           f"sliding blocks as {_tup(blocks)}, but its components must be "
                           "at least one.")
    _no_integers(x, "im2col_out_cpu")
    rows = x.shape[-3] * kernel_size[0] * kernel_size[1]
    return tuple(x.shape[:-3]) + (rows, blocks[0] * blocks[1]), x.dtype


def _im2col_kernel(x, kernel_size, dilation, padding, stride):
    win = _windows(_pad(x, padding), kernel_size, dilation, stride)    # (..., C, *L, *k)
    lead = x.shape[:-2]
    perm = tuple(range(len(lead))) + tuple(range(len(lead) + 2, len(lead) + 4)) + \
        (len(lead), len(lead) + 1)
    rows = x.shape[-3] * kernel_size[0] * kernel_size[1]
    out = win.transpose(perm).reshape(lead[:-1] + (rows, win.shape[-4] * win.shape[-3]))
    return out.copy() if np.may_share_memory(out, x) else out


def _im2col_vjp(ctx, grad):
    x_shape = ctx.shapes[0]
    _, k, d, p, s = ctx.args
    return col2im(grad, list(x_shape[-2:]), k, d, p, s), None, None, None, None


IM2COL = register("im2col", _im2col_kernel, meta=_im2col_meta, vjp=_im2col_vjp, save=(),
                  check=True, tags=("prim", "shape"),
                  schema="im2col(Tensor self, int[2] kernel_size, int[2] dilation, "
                         "int[2] padding, int[2] stride) -> Tensor")


def im2col(input, kernel_size, dilation, padding, stride):
    """aten::im2col, the kernel of F.unfold (3-d or 4-d input, 2 spatial dims)."""
    return dispatch(IM2COL, (input, list(kernel_size), list(dilation), list(padding),
                             list(stride)))


def _col2im_meta(x, output_size, kernel_size, dilation, padding, stride):
    _check_pairs((("output_size", output_size), ("kernel_size", kernel_size),
                  ("dilation", dilation), ("padding", padding), ("stride", stride)))
    _check_block_params(kernel_size, dilation, padding, stride)
    if x.ndim not in (2, 3) or 0 in x.shape[-2:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{_sizes(x)}")
    K = kernel_size[0] * kernel_size[1]
    if x.shape[-2] % K:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[-2]} "
                           f"and kernel_size={_tup(kernel_size)}.")
    blocks = _forward_size(output_size, kernel_size, stride, padding, dilation)
    where = (f"Given output_size={_tup(output_size)}, kernel_size={_tup(kernel_size)}, "
             f"dilation={_tup(dilation)}, padding={_tup(padding)}, stride={_tup(stride)}, ")
    if any(b < 1 for b in blocks):
        raise RuntimeError(where + f"calculated shape of the array of sliding blocks as "
                           f"{_tup(blocks)}, which is too small (non-positive)")
    if x.shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(where + "expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={x.shape[-1]}.")
    _no_integers(x, "col2im_out_cpu")
    return tuple(x.shape[:-2]) + (x.shape[-2] // K,) + tuple(output_size), x.dtype


def _col2im_kernel(x, output_size, kernel_size, dilation, padding, stride):
    lead = x.shape[:-2]
    kernel, output_size = tuple(kernel_size), tuple(output_size)
    blocks = _forward_size(output_size, kernel, stride, padding, dilation)
    C = x.shape[-2] // (kernel[0] * kernel[1])
    cols = x.reshape(lead + (C,) + kernel + blocks)
    padded = tuple(o + 2 * p for o, p in zip(output_size, padding))
    out = _col2im(cols, len(lead) + 1, kernel, padded, dilation, stride)
    return np.ascontiguousarray(_crop(out, padding, output_size))


def _col2im_vjp(ctx, grad):
    _, _, k, d, p, s = ctx.args
    return im2col(grad, k, d, p, s), None, None, None, None, None


COL2IM = register("col2im", _col2im_kernel, meta=_col2im_meta, vjp=_col2im_vjp, save=(),
                  check=True, tags=("prim", "scatter"),
                  schema="col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, "
                         "int[2] dilation, int[2] padding, int[2] stride) -> Tensor")


def col2im(input, output_size, kernel_size, dilation, padding, stride):
    """aten::col2im, the kernel of F.fold (2-d or 3-d input, 2 spatial dims)."""
    return dispatch(COL2IM, (input, list(output_size), list(kernel_size), list(dilation),
                             list(padding), list(stride)))
