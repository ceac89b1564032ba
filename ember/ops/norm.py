"""Normalization: batch_norm and layer_norm (fused registry ops) and the composites
built on them (instance_norm, group_norm, rms_norm).

Note: `batch_norm` and `layer_norm` have fused NumPy kernels (one pass for the
statistics, one for the affine output, half precision computed in float32) with
their own vjps and `decomp=` functions, both written in ember ops, so double
backward works. The kernels are pure: the running-statistics update of training-mode
batch_norm is done by the public `batch_norm` through `copy_` under no_grad, so the
buffers' version counters move as in PyTorch. The backward recomputes the batch
statistics from the saved input (two reductions) instead of saving extra outputs.
group_norm and rms_norm are compositions of ember ops; instance_norm is batch_norm
over the input viewed as (1, N*C, ...), as in PyTorch's at::instance_norm.
"""
import math

import numpy as np

from .. import _dtype as D
from .._dispatch import dispatch
from .._tensor import Tensor
from ._composite import decomp_vjp
from ._elementwise import type_name
from . import _norm_half
from ._lowp import cast
from ._registry import register
from .reduction import var_mean

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "rms_norm"]

_HALF = (D.float16, D.bfloat16)


def _comp(dtype):
    """The dtype the math runs in: float32 for half precision, else the input's."""
    return D.float32 if dtype in _HALF else dtype


def _check_params(name, dtype, params):
    """PyTorch's CPU mixed-dtype rule: float/double inputs need parameters of the same
    dtype; half/bfloat16 inputs take parameters of their own dtype or float32 (all alike)."""
    dts = {p.dtype for p in params if p is not None}
    if not dts:
        return
    if dtype in _HALF:
        if len(dts) > 1 or not dts <= {dtype, D.float32}:
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    elif dts != {dtype}:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _check_floating(kernel, dtype):
    if dtype._kind != 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_name(dtype)}\'')


class _Spec:
    """shape/dtype of a tensor argument, from a Tensor or a NumPy array (kernel and meta
    share one checker)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, x):
        self.shape = tuple(x.shape)
        self.dtype = x.dtype if isinstance(x, Tensor) else D._FROM_NP[x.dtype]


def _specs(*xs):
    return [None if x is None else _Spec(x) for x in xs]


def _mean_square(d, axes):
    """mean(d * d) over axes (keepdims) as a contraction, without a full-size square."""
    letters = "abcdefghijklmnopqrstuvwxyz"[:d.ndim]
    keep = "".join(c for i, c in enumerate(letters) if i not in axes)
    n = math.prod(d.shape[i] for i in axes)
    r = np.einsum(f"{letters},{letters}->{keep}", d, d) / max(n, 1)
    return np.expand_dims(r, axes).astype(d.dtype, copy=False)


# ------------------------------------------------------------------ batch_norm

def _bn_check(x, w, b, rm, rv, training):
    _check_floating("batch_norm", x.dtype)
    c = x.shape[1] if len(x.shape) > 1 else 0
    for name, p in (("weight", w), ("bias", b), ("running_mean", rm), ("running_var", rv)):
        if p is not None and math.prod(p.shape) != c:
            raise RuntimeError(f"{name} should contain {c} elements not {math.prod(p.shape)}")
    if not training and (rm is None or rv is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    _check_params("batch_norm", x.dtype, (w, b, rm, rv))
    return c


def _bn_layout(ndim, c):
    """(reduction axes, the per-channel broadcast shape) for an (N, C, *) input."""
    return (0,) + tuple(range(2, ndim)), (1, c) + (1,) * (ndim - 2)


def _bn_kernel(x, w, b, rm, rv, training, momentum, eps):
    c = _bn_check(*_specs(x, w, b, rm, rv), training)
    half = _norm_half.forward(x, w, b, rm, rv, training, eps)     # bf16/fp16 in C
    if half is not None:
        return half
    comp = _comp(D._FROM_NP[x.dtype]).np
    axes, shape = _bn_layout(x.ndim, c)
    xc = cast(x, comp, copy=False)
    if training:
        if x.size == 0:
            return np.empty(x.shape, x.dtype)
        out = xc - xc.mean(axes, keepdims=True)     # one fresh buffer, updated in place
        scale = 1 / np.sqrt(_mean_square(out, axes) + comp.type(eps))
    else:
        out = xc - rm.astype(comp).reshape(shape)
        scale = 1 / np.sqrt(rv.astype(comp).reshape(shape) + comp.type(eps))
    if w is not None:
        scale = scale * w.astype(comp).reshape(shape)
    out *= scale
    if b is not None:
        out += b.astype(comp).reshape(shape)
    return cast(out, x.dtype, copy=False)


def _bn_meta(x, w, b, rm, rv, training, momentum, eps):
    _bn_check(x, w, b, rm, rv, training)
    return tuple(x.shape), x.dtype


def _bn_stats(xc, rm, rv, training, axes, shape, eps):
    """(mean, 1/sqrt(var + eps)) in ember ops, broadcastable against the input."""
    if training:
        var, mean = var_mean(xc, axes, correction=0, keepdim=True)
    else:
        mean, var = rm.view(shape).to(xc.dtype), rv.view(shape).to(xc.dtype)
    return mean, (var + eps).rsqrt()


def _bn_decomp(x, w, b, rm, rv, training, momentum, eps):
    axes, shape = _bn_layout(x.dim(), x.shape[1])
    xc = x.to(_comp(x.dtype))
    mean, invstd = _bn_stats(xc, rm, rv, training, axes, shape, eps)
    out = (xc - mean) * invstd
    if w is not None:
        out = out * w.view(shape)
    if b is not None:
        out = out + b.view(shape)
    return out.to(x.dtype)


def _bn_vjp(ctx, g):
    """PyTorch's batchnorm backward: through the batch statistics in training mode,
    through constants (the running statistics) in eval mode."""
    x, w, _, rm, rv, training, _, eps = ctx.args
    mask = list(ctx.needs_input_grad[:3])
    if training and x.numel() and g.dtype == x.dtype:   # the fused op (one pass, no temps)
        grads = dispatch(BN_BACKWARD, (g, x, w, None, None, None, None, True, eps, mask))
    else:
        grads = _bn_backward_decomp(g, x, w, rm, rv, None, None, training, eps, mask)
    return tuple(gr if need else None for gr, need in zip(grads, mask)) + (None,) * 5


def _bn_backward_decomp(g, x, w, rm, rv, save_mean, save_invstd, training, eps, mask):
    """(grad_input, grad_weight, grad_bias) in ember ops; the batch statistics are
    recomputed from x (save_mean/save_invstd are not used)."""
    nx, nw, nb = mask
    axes, shape = _bn_layout(x.dim(), x.shape[1])
    comp = _comp(x.dtype)
    xc, gc = x.to(comp), g.to(comp)
    if training and x.numel() == 0:
        z = gc.sum(axes)
        return gc, z, z
    mean, invstd = _bn_stats(xc, rm, rv, training, axes, shape, eps)
    # per-channel factors are folded into (1, C, 1...) tensors before they meet the big
    # ones: the weight's share of mean(gs) and mean(gs * xhat) is its channel's sum(g)
    # and sum(g * (x - mean)), computed once for grad_weight/grad_bias and grad_input
    xmu = xc - mean
    gsum = gc.sum(axes, keepdim=True)
    gdot = (gc * xmu).sum(axes, keepdim=True)
    gw = (gdot * invstd).reshape(-1)
    gb = gsum.reshape(-1)
    scale = invstd if w is None else invstd * w.view(shape).to(comp)
    if training:
        m = x.numel() // x.shape[1]
        gx = (gc - xmu * (invstd * invstd * gdot / m) - gsum / m) * scale
    else:
        gx = gc * scale
    return gx, gw, gb


def _bn_backward_kernel(g, x, w, rm, rv, save_mean, save_invstd, training, eps, mask):
    """The decomposition's arithmetic in NumPy: x - mean is the one full-size scratch,
    the channel sums are contractions, grad_input is built in that scratch in place."""
    half = _norm_half.backward(g, x, w, rm, rv, training, eps)    # bf16/fp16 in C
    if half is not None:
        return half
    c = x.shape[1]
    comp = _comp(D._FROM_NP[x.dtype]).np
    axes, shape = _bn_layout(x.ndim, c)
    xc, gc = cast(x, comp, copy=False), cast(g, comp, copy=False)
    if training:
        xmu = xc - xc.mean(axes, keepdims=True)
        invstd = 1 / np.sqrt(_mean_square(xmu, axes) + comp.type(eps))
    else:
        xmu = xc - rm.astype(comp).reshape(shape)
        invstd = 1 / np.sqrt(rv.astype(comp).reshape(shape) + comp.type(eps))
    letters = "abcdefghijklmnopqrstuvwxyz"[:x.ndim]
    gsum = gc.sum(axes, keepdims=True)
    gdot = np.einsum(f"{letters},{letters}->b", gc, xmu).reshape(shape)
    gw = (gdot * invstd).reshape(-1)
    gb = gsum.reshape(-1)
    scale = invstd if w is None else invstd * w.astype(comp).reshape(shape)
    if training:
        m = x.size // c
        xmu *= invstd * invstd * gdot / m
        np.subtract(gc, xmu, out=xmu)
        xmu -= gsum / m
        xmu *= scale
        gx = xmu
    else:
        gx = gc * scale
    pdt = comp if w is None else w.dtype
    return cast(gx, x.dtype, copy=False), gw.astype(pdt, copy=False), \
        gb.astype(pdt, copy=False)


def _bn_backward_meta(g, x, w, rm, rv, save_mean, save_invstd, training, eps, mask):
    c = x.shape[1] if x.ndim > 1 else 0
    pdt = _comp(x.dtype) if w is None else w.dtype
    return [(tuple(x.shape), x.dtype), ((c,), pdt), ((c,), pdt)]


BN_BACKWARD = register(
    "native_batch_norm_backward", _bn_backward_kernel, meta=_bn_backward_meta,
    vjp=decomp_vjp(_bn_backward_decomp), decomp=_bn_backward_decomp,
    schema="native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
           "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, "
           "Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "
           "-> (Tensor, Tensor, Tensor)")


BATCH_NORM = register("batch_norm", _bn_kernel, meta=_bn_meta, vjp=_bn_vjp, decomp=_bn_decomp,
                      save=(0, 1, 3, 4),
                      schema="batch_norm(Tensor input, Tensor? weight, Tensor? bias, "
                             "Tensor? running_mean, Tensor? running_var, bool training, "
                             "float momentum, float eps) -> Tensor")


def _update_running_stats(input, running_mean, running_var, momentum):
    """The running-statistics update of training-mode batch_norm (PyTorch's
    batch_norm_update_stats): r = (1 - momentum) * r + momentum * batch statistic,
    with the unbiased batch variance, written in place through copy_."""
    from ..autograd.grad_mode import no_grad
    if input.numel() == 0 or (running_mean is None and running_var is None):
        return
    axes, _ = _bn_layout(input.dim(), input.shape[1])
    with no_grad():
        x = input.detach().to(_comp(input.dtype))
        if running_var is not None:
            n = input.numel() // input.shape[1]
            var, mean = var_mean(x, axes, correction=0)
            if type(n) is not int:        # a symbolic size: no Python float made from it
                unbiased = var_mean(x, axes, correction=1)[0]
            else:
                unbiased = var * (n / (n - 1)) if n > 1 else var * float("inf")
            running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
        else:
            mean = x.mean(axes)
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean * momentum)


def _check_momentum(momentum):
    if not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
        raise TypeError("batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled=True):
    """torch.batch_norm: normalizes over (N, *) per channel; in training mode updates the
    running statistics (when given) in place."""
    _check_momentum(momentum)
    if not training:
        return dispatch(BATCH_NORM, (input, weight, bias, running_mean, running_var, False,
                                     float(momentum), float(eps)))
    # training mode reads no running statistics: the op does not get (or save) them, so
    # their in-place update below leaves its backward valid
    _bn_check(input, weight, bias, running_mean, running_var, True)
    out = dispatch(BATCH_NORM, (input, weight, bias, None, None, True, float(momentum),
                                float(eps)))
    _update_running_stats(input, running_mean, running_var, momentum)
    return out


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled=True):
    """torch.instance_norm: batch_norm of the input viewed as (1, N*C, *); running
    statistics (when given) get the average of the per-instance updates."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    if input.dim() < 2:
        raise RuntimeError(f"instance_norm: expected an input with at least 2 dimensions, "
                           f"got {input.dim()}")
    n, c = input.shape[0], input.shape[1]
    rep = [None if t is None else t.repeat(n) for t in (weight, bias, running_mean, running_var)]
    x = input.contiguous().view(1, n * c, *input.shape[2:])
    out = batch_norm(x, rep[0], rep[1], rep[2], rep[3], use_input_stats, momentum, eps)
    from ..autograd.grad_mode import no_grad
    with no_grad():
        for buf, r in ((running_mean, rep[2]), (running_var, rep[3])):
            if buf is not None:
                buf.copy_(r.view(n, c).mean(0))
    return out.view(input.shape)


# ------------------------------------------------------------------ layer_norm

def _ln_check(x, normalized_shape, w, b):
    ns = tuple(normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, p in (("weight", w), ("bias", b)):
        if p is not None and tuple(p.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(ns)}")
    if len(x.shape) < len(ns) or tuple(x.shape[len(x.shape) - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size"
                           f"{list(x.shape)}")
    _check_floating("LayerNormKernelImpl", x.dtype)
    _check_params("layer_norm", x.dtype, (w, b))
    return tuple(range(len(x.shape) - len(ns), len(x.shape)))


def _ln_kernel(x, normalized_shape, w, b, eps):
    axes = _ln_check(_Spec(x), normalized_shape, *_specs(w, b))
    comp = _comp(D._FROM_NP[x.dtype]).np
    xc = cast(x, comp, copy=False)
    if x.size == 0:
        return np.empty(x.shape, x.dtype)
    out = xc - xc.mean(axes, keepdims=True)         # one fresh buffer, updated in place
    out *= 1 / np.sqrt(_mean_square(out, axes) + comp.type(eps))
    if w is not None:
        out *= w.astype(comp, copy=False)
    if b is not None:
        out += b.astype(comp, copy=False)
    return cast(out, x.dtype, copy=False)


def _ln_meta(x, normalized_shape, w, b, eps):
    _ln_check(x, normalized_shape, w, b)
    return tuple(x.shape), x.dtype


def _ln_stats(xc, axes, eps):
    var, mean = var_mean(xc, axes, correction=0, keepdim=True)
    return mean, (var + eps).rsqrt()


def _ln_decomp(x, normalized_shape, w, b, eps):
    axes = tuple(range(x.dim() - len(normalized_shape), x.dim()))
    xc = x.to(_comp(x.dtype))
    mean, rstd = _ln_stats(xc, axes, eps)
    out = (xc - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out.to(x.dtype)


def _sum_leading(t, k):
    """t summed over its first k dims (none: t itself; sum(()) would reduce them all)."""
    return t.sum(tuple(range(k))) if k else t


def _ln_vjp(ctx, g):
    x, normalized_shape, w, b, eps = ctx.args
    nx, _, nw, nb = ctx.needs_input_grad[:4]
    k = x.dim() - len(normalized_shape)
    comp = _comp(x.dtype)
    if x.numel() == 0:
        gc = g.to(comp)
        z = _sum_leading(gc, k)
        return (gc if nx else None, None, z if nw else None, z if nb else None, None)
    mean, rstd = _ln_stats(x.to(comp), tuple(range(k, x.dim())), eps)
    args = (g, x, list(normalized_shape), mean, rstd, w, b, [nx, nw, nb])
    if g.dtype == x.dtype:      # the fused op (one scratch, contractions for the sums)
        gx, gw, gb = dispatch(LN_BACKWARD, args)
    else:
        gx, gw, gb = _ln_backward_decomp(*args)
    return gx if nx else None, None, gw if nw else None, gb if nb else None, None


def _ln_backward_decomp(g, x, normalized_shape, mean, rstd, w, b, mask):
    """(grad_input, grad_weight, grad_bias) in ember ops, from the saved statistics."""
    k = x.dim() - len(normalized_shape)
    axes = tuple(range(k, x.dim()))
    comp = _comp(x.dtype)
    xc, gc = x.to(comp), g.to(comp)
    xhat = (xc - mean) * rstd
    gw = _sum_leading(gc * xhat, k)
    gb = _sum_leading(gc, k)
    gs = gc if w is None else gc * w.to(comp)
    gx = rstd * (gs - gs.mean(axes, keepdim=True) - xhat * (gs * xhat).mean(axes, keepdim=True))
    return gx, gw, gb


def _ln_backward_kernel(g, x, normalized_shape, mean, rstd, w, b, mask):
    """The decomposition's arithmetic in NumPy on (rows, G) views: xhat is the one
    full-size scratch (two with a weight), the sums are contractions, and grad_input is
    built in the scratch in place."""
    comp = _comp(D._FROM_NP[x.dtype]).np
    G = int(np.prod(normalized_shape))
    xc = cast(x, comp, copy=False).reshape(-1, G)
    gc = cast(g, comp, copy=False).reshape(-1, G)
    xhat = np.subtract(xc, mean.astype(comp, copy=False).reshape(-1, 1), order="C")
    r = rstd.astype(comp, copy=False).reshape(-1, 1)
    xhat *= r
    gw = np.einsum("rg,rg->g", gc, xhat)
    gb = gc.sum(0)
    gs = gc if w is None else gc * w.astype(comp, copy=False).reshape(1, G)
    c1 = gs.mean(1, keepdims=True)
    c2 = (np.einsum("rg,rg->r", gs, xhat) / comp.type(G)).reshape(-1, 1)
    xhat *= c2
    np.subtract(gs, xhat, out=xhat)
    xhat -= c1
    xhat *= r
    pdt = comp if w is None else w.dtype
    ns = tuple(normalized_shape)
    return cast(xhat.reshape(x.shape), x.dtype, copy=False), \
        gw.reshape(ns).astype(pdt, copy=False), gb.reshape(ns).astype(pdt, copy=False)


def _ln_backward_meta(g, x, normalized_shape, mean, rstd, w, b, mask):
    pdt = _comp(x.dtype) if w is None else w.dtype
    ns = tuple(normalized_shape)
    return [(tuple(x.shape), x.dtype), (ns, pdt), (ns, pdt)]


LN_BACKWARD = register(
    "native_layer_norm_backward", _ln_backward_kernel, meta=_ln_backward_meta,
    vjp=decomp_vjp(_ln_backward_decomp), decomp=_ln_backward_decomp,
    schema="native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
           "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) "
           "-> (Tensor, Tensor, Tensor)")
LN_BACKWARD.meta_layout = "contiguous"    # the kernel works on (rows, G) copies


LAYER_NORM = register("layer_norm", _ln_kernel, meta=_ln_meta, vjp=_ln_vjp, decomp=_ln_decomp,
                      save=(0, 2),
                      schema="layer_norm(Tensor input, SymInt[] normalized_shape, "
                             "Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor")


def _shape_list(normalized_shape, fn):
    if not isinstance(normalized_shape, (list, tuple)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool)
            for s in normalized_shape):
        raise TypeError(f"{fn}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}")
    return [int(s) for s in normalized_shape]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """torch.layer_norm: normalizes over the trailing `normalized_shape` dims."""
    ns = _shape_list(normalized_shape, "layer_norm")
    return dispatch(LAYER_NORM, (input, ns, weight, bias, float(eps)))


# ------------------------------------------------------------- composites

def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """torch.group_norm: statistics per (sample, group of C/num_groups channels)."""
    shape = tuple(input.shape)
    n, c = shape[0], shape[1]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {list(shape)} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} and "
                               f"input of shape {list(shape)}")
    _check_floating("group_norm", input.dtype)
    _check_params("group_norm", input.dtype, (weight, bias))
    comp = _comp(input.dtype)
    x = input.to(comp).reshape(n, num_groups, -1)
    if x.numel():
        var, mean = var_mean(x, -1, correction=0, keepdim=True)
        x = (x - mean) * (var + eps).rsqrt()
    out = x.reshape(shape)
    pshape = (1, c) + (1,) * (len(shape) - 2)
    if weight is not None:
        out = out * weight.reshape(pshape)
    if bias is not None:
        out = out + bias.reshape(pshape)
    return out.to(input.dtype)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.rms_norm: x / sqrt(mean(x^2 over the trailing dims) + eps) * weight; eps
    defaults to the input dtype's machine epsilon."""
    ns = _shape_list(normalized_shape, "rms_norm")
    k = len(ns)
    shape = list(input.shape)
    if len(shape) < k or shape[len(shape) - k:] != ns:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[*{', '.join(map(str, ns))}], but got input of size{shape}")
    if weight is not None and list(weight.shape) != ns:
        raise RuntimeError("Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = {ns}")
    if not input.dtype.is_complex:               # complex: x * x (not |x|^2), as PyTorch
        _check_floating("rms_norm", input.dtype)
    comp = _comp(input.dtype)
    if eps is None:
        eps = D.finfo(comp.to_real()).eps    # the epsilon of the compute (opmath) dtype
    x = input.to(comp)
    dims = tuple(range(input.dim() - k, input.dim()))
    out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt() if dims else x
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)

