"""Loss ops: one registry entry per loss that PyTorch's CPU autocast runs in float32.

Note: PyTorch's AutocastCPU fp32 list names these losses, so each needs a registry
entry (amp_policy="fp32") for autocast to see it. Most are composites in PyTorch too:
here their `decomp` (ember ops) IS the definition — the cpu kernel runs it on the
arrays, the meta runs it on meta tensors (so shapes, dtypes and shape errors come from
the same code), and the vjp (`_decomp_vjp`) differentiates it again with the engine,
so double backward works and the gradient is the composite's, as in PyTorch.
Fused NumPy kernels with hand-written vjps: `nll_loss` (the hot path of
cross_entropy), `binary_cross_entropy` (PyTorch's gradient clamps x(1-x) at 1e-12)
and CTC (`_ctc_loss`: alpha recursion vectorized over batch and extended labels;
`_ctc_loss_backward`: the beta recursion and PyTorch's gradient formula, which
assumes log_probs come from log_softmax). `reduction` is aten's enum:
0 none, 1 mean, 2 sum.
"""
import math

import numpy as np

from .. import _dtype as D
from ._composite import decomp_kernel, decomp_meta, decomp_vjp
from ._elementwise import type_name as _type_name
from ._registry import register

__all__ = []

NONE, MEAN, SUM = 0, 1, 2


def _reduce(loss, reduction):
    if reduction == MEAN:
        return loss.mean()
    if reduction == SUM:
        return loss.sum()
    return loss


def _is_meta(t):
    return t._backend == "meta"


def _composite(name, decomp, save=None, schema=None):
    return register(name, decomp_kernel(decomp), meta=decomp_meta(decomp),
                    vjp=decomp_vjp(decomp), decomp=decomp, save=save, amp_policy="fp32",
                    schema=schema)


# ------------------------------------------------------------ pointwise losses

def _l1(x, t, reduction):
    return _reduce((x - t).abs(), reduction)


def _mse(x, t, reduction):
    d = x - t
    return _reduce(d * d, reduction)


def _huber(x, t, reduction, delta):
    d = x - t
    z = d.abs()
    from .indexing import where
    return _reduce(where(z < delta, 0.5 * d * d, delta * (z - 0.5 * delta)), reduction)


def _smooth_l1(x, t, reduction, beta):
    d = x - t
    z = d.abs()
    from .indexing import where
    return _reduce(where(z < beta, 0.5 * d * d / beta, z - 0.5 * beta), reduction)


def _broadcast(*ts):
    from .rearrange import broadcast_tensors
    return broadcast_tensors(*ts)


def _soft_margin(x, t, reduction):
    x, t = _broadcast(x, t)
    return _reduce((-x * t).exp().log1p(), reduction)


def _log_sigmoid(x):
    """F.logsigmoid's registry op (registered by nn.functional with the activations),
    looked up in the registry: ops do not import nn."""
    from .._dispatch import dispatch
    from ._registry import get
    return dispatch(get("log_sigmoid"), (x,))


def _bce_logits(x, t, weight, pos_weight, reduction):
    ls = _log_sigmoid(x)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1) * t + 1)
    loss = (1 - t) * x - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _kl_div(x, t, reduction, log_target):
    loss = t.exp() * (t - x) if log_target else t.xlogy(t) - t * x
    return _reduce(loss, reduction)


def _poisson_nll(x, t, log_input, full, eps, reduction):
    loss = x.exp() - t * x if log_input else x - t * (x + eps).log()
    if full:
        st = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + st.masked_fill(t <= 1, 0)
    return _reduce(loss, reduction)


def _margin_ranking(x1, x2, t, margin, reduction):
    return _reduce((-t * (x1 - x2) + margin).clamp_min(0), reduction)


def _hinge_embedding(x, t, margin, reduction):
    from .indexing import where
    t, x = _broadcast(t, x)
    zero = x.new_zeros(())
    out = where(t != 1, (margin - x).clamp_min(0), zero) + where(t != -1, x, zero)
    return _reduce(out, reduction)


def _cosine_embedding(x1, x2, t, margin, reduction):
    td = t.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and not (x1.dim() == 2 and x2.dim() == 2):
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(x1.shape)} and {list(x2.shape)}.")
    if td == 0 and not (x1.dim() == 1 and x2.dim() == 1):
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(x1.shape)} and {list(x2.shape)}.")
    from .indexing import where
    eps = 1e-12
    prod = (x1 * x2).sum(td)
    m1 = (x1 * x1).sum(td) + eps
    m2 = (x2 * x2).sum(td) + eps
    cos = prod / (m1 * m2).sqrt()
    zero = cos.new_zeros(())
    out = where(t == 1, 1 - cos, zero) + where(t == -1, (cos - margin).clamp_min(0), zero)
    return _reduce(out, reduction)


def _pairwise(x1, x2, p, eps):
    from .vector_norm import pairwise_distance
    return pairwise_distance(x1, x2, p, eps)


def _triplet_margin(a, p_, n, margin, p, eps, swap, reduction):
    if not (a.dim() == p_.dim() == n.dim()):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a.dim()}D, "
                           f"positive {p_.dim()}D, and negative {n.dim()}D inputs")
    d_pos = _pairwise(a, p_, p, eps)
    d_neg = _pairwise(a, n, p, eps)
    if swap:
        d_neg = d_neg.minimum(_pairwise(p_, n, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ------------------------------------------------------------ margin (class) losses

def _vector_or_matrix(x):
    """A 0-d input is one sample of one class (PyTorch accepts it; its loss is 0)."""
    if not (x.dim() == 0 or (x.dim() == 1 and x.shape[0] != 0)
            or (x.dim() == 2 and x.shape[1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(x.shape)}")


def _check_index_dtype(t):
    if t.dtype is not D.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(t.dtype)}")


def _multi_margin(x, t, p, margin, weight, reduction):
    _vector_or_matrix(x)
    _check_index_dtype(t)
    n = 1 if x.dim() <= 1 else x.shape[0]
    c = x.shape[-1] if x.dim() else 1
    if not (t.dim() <= 1 and t.numel() == n):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(t.shape)}. Input has shape {list(x.shape)}.")
    if weight is not None and not (weight.dim() <= 1 and weight.numel() == c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _same_dtype(x, weight)
    if not _is_meta(t) and t.numel() and bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    from .indexing import where
    from .creation import arange
    x2 = x.reshape(n, c)
    t2 = t.reshape(n, 1)
    z = (margin - x2.gather(1, t2) + x2).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.reshape(-1)[t2.reshape(-1)].reshape(n, 1)
    z = where(arange(c) == t2, z.new_zeros(()), z)
    loss = z.sum(1) / c
    return _reduce(loss.reshape(t.shape) if x.dim() <= 1 else loss, reduction)


def _multilabel_margin(x, t, reduction):
    _vector_or_matrix(x)
    _check_index_dtype(t)
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(t.shape)} for input of size: "
                           f"{list(x.shape)}")
    c = x.shape[-1] if x.dim() else 1
    n = 1 if x.dim() <= 1 else x.shape[0]
    x2, t2 = x.reshape(n, c), t.reshape(n, c)
    valid = (t2 >= 0).to(D.int64).cumprod(1).bool()      # labels before the first -1
    if not _is_meta(t) and t.numel() and bool((valid & (t2 >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    from .indexing import where
    from .creation import arange
    tidx = where(valid, t2, t2.new_zeros(()))
    is_target = ((tidx.unsqueeze(2) == arange(c)) & valid.unsqueeze(2)).any(1)   # (n, c)
    xj = x2.gather(1, tidx)
    z = (1 - (xj.unsqueeze(2) - x2.unsqueeze(1))).clamp_min(0)     # (n, slot, class)
    mask = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = where(mask, z, z.new_zeros(())).sum((1, 2)) / c
    return _reduce(loss.reshape(()) if x.dim() <= 1 else loss, reduction)


# the composite losses' schemas (aten's; reduction is its enum: 0 none, 1 mean, 2 sum)
_LOSS_SCHEMAS = {
    "l1_loss": "l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "mse_loss": "mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "huber_loss": "huber_loss(Tensor self, Tensor target, int reduction=1, "
                  "float delta=1.) -> Tensor",
    "smooth_l1_loss": "smooth_l1_loss(Tensor self, Tensor target, int reduction=1, "
                      "float beta=1.) -> Tensor",
    "soft_margin_loss": "soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits(Tensor self, "
                                        "Tensor target, Tensor? weight=None, "
                                        "Tensor? pos_weight=None, int reduction=1) -> Tensor",
    "kl_div": "kl_div(Tensor self, Tensor target, int reduction=1, *, "
              "bool log_target=False) -> Tensor",
    "poisson_nll_loss": "poisson_nll_loss(Tensor input, Tensor target, bool log_input, "
                        "bool full, float eps, int reduction) -> Tensor",
    "margin_ranking_loss": "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, "
                           "float margin=0., int reduction=1) -> Tensor",
    "hinge_embedding_loss": "hinge_embedding_loss(Tensor self, Tensor target, float margin=1., "
                            "int reduction=1) -> Tensor",
    "cosine_embedding_loss": "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, "
                             "float margin=0., int reduction=1) -> Tensor",
    "triplet_margin_loss": "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, "
                           "float margin=1., float p=2., float eps=1e-06, bool swap=False, "
                           "int reduction=1) -> Tensor",
    "multi_margin_loss": "multi_margin_loss(Tensor self, Tensor target, Scalar p=1, "
                         "Scalar margin=1, Tensor? weight=None, int reduction=1) -> Tensor",
    "multilabel_margin_loss": "multilabel_margin_loss(Tensor self, Tensor target, "
                              "int reduction=1) -> Tensor",
}


for _name, _fn in (("l1_loss", _l1), ("mse_loss", _mse), ("huber_loss", _huber),
                   ("smooth_l1_loss", _smooth_l1), ("soft_margin_loss", _soft_margin),
                   ("binary_cross_entropy_with_logits", _bce_logits), ("kl_div", _kl_div),
                   ("poisson_nll_loss", _poisson_nll),
                   ("margin_ranking_loss", _margin_ranking),
                   ("hinge_embedding_loss", _hinge_embedding),
                   ("cosine_embedding_loss", _cosine_embedding),
                   ("triplet_margin_loss", _triplet_margin),
                   ("multi_margin_loss", _multi_margin),
                   ("multilabel_margin_loss", _multilabel_margin)):
    _composite(_name, _fn, schema=_LOSS_SCHEMAS[_name])


# ---------------------------------------------------------- binary_cross_entropy

def _comp_np(dt):
    return np.float32 if dt.itemsize == 2 else dt


def _bce_check(x):
    if x.size and not np.all((x >= 0) & (x <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")


def _bce_kernel(x, t, w, reduction):
    _bce_check(x)
    comp = _comp_np(x.dtype)
    xc, tc = x.astype(comp, copy=False), t.astype(comp, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = (tc - 1) * np.maximum(np.log1p(-xc), -100) - tc * np.maximum(np.log(xc), -100)
    if w is not None:
        loss = loss * w.astype(comp, copy=False)
    if reduction == MEAN:
        loss = np.asarray(loss.mean() if loss.size else np.nan, comp)
    elif reduction == SUM:
        loss = np.asarray(loss.sum(), comp)
    return loss.astype(x.dtype, copy=False)


def _bce_decomp(x, t, w, reduction):
    loss = (t - 1) * x.neg().log1p().clamp_min(-100) - t * x.log().clamp_min(-100)
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def _bce_meta(x, t, w, reduction):
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f"Using a target size ({_size(t)}) that is different to the input "
                         f"size ({_size(x)}) is deprecated. Please ensure they have the same "
                         "size.")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for '
                                  f"'{_type_name(x.dtype)}'")
    return (tuple(x.shape) if reduction == NONE else ()), x.dtype


def _size(t):
    return f"torch.Size({list(t.shape)})"


def _bce_vjp(ctx, g):
    """PyTorch's binary_cross_entropy_backward: g (x - t) / max(x (1 - x), 1e-12) * w;
    the target's gradient is g (log(1 - x) - log(x)) * w."""
    x, t, w, reduction = ctx.args
    if reduction == MEAN:
        g = g / x.numel()
    gx = gt = None
    if ctx.needs_input_grad[0]:
        gx = g * (x - t) / ((1 - x) * x).clamp_min(1e-12)
        if w is not None:
            gx = gx * w
    if ctx.needs_input_grad[1]:
        gt = g * (x.neg().log1p() - x.log())
        if w is not None:
            gt = gt * w
    return gx, gt, None, None


BCE = register("binary_cross_entropy", _bce_kernel, meta=_bce_meta, vjp=_bce_vjp,
               decomp=_bce_decomp, amp_policy="fp32", check=True,
               schema="binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, "
                      "int reduction=1) -> Tensor")


# ------------------------------------------------------------------- nll_loss

def _nll_check(x, t, w, ignore_index):
    """nll_loss_nd's checks, with PyTorch's exception types and messages."""
    if x.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {x.dim()})")
    if x.dim() != 1 and x.shape[0] != (t.shape[0] if t.dim() else 1):
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.dim() else 1}).")
    if t.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type_name(t.dtype)}")
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for "
                                  f"'{_type_name(x.dtype)}'")
    if x.dim() <= 2:
        if t.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (x.dim() == 1 and t.dim() == 0) and x.shape[0] != t.shape[0]:
            raise RuntimeError(f"size mismatch (got input: {list(x.shape)}, target: "
                               f"{list(t.shape)})")
    elif x.dim() == 4:
        if t.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {t.dim()}")
        if tuple(t.shape) != (x.shape[0],) + tuple(x.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(x.shape)} , target: "
                               f"{list(t.shape)}")
    elif tuple(t.shape[1:]) != tuple(x.shape[2:]):
        raise RuntimeError(f"Expected target size {[x.shape[0]] + list(x.shape[2:])}, got "
                           f"{list(t.shape)}")
    c = x.shape[0 if x.dim() == 1 else 1]
    if w is not None and not (w.dim() <= 1 and w.numel() == c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(w.shape)}")
    _same_dtype(x, w)
    if not _is_meta(t) and t.numel():
        tn = t._data
        bad = (tn != ignore_index) & ((tn < 0) | (tn >= c))
        if bad.any():
            raise IndexError(f"Target {int(tn[bad].flat[0])} is out of bounds.")


def _same_dtype(x, w):
    """PyTorch's class-weighted kernels take weight in the input's dtype only."""
    if w is not None and w.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x.dtype)} but found "
                           f"{_type_name(w.dtype)}")


def _nll_meta(x, t, w, reduction, ignore_index):
    _nll_check(x, t, w, ignore_index)
    return (tuple(t.shape) if reduction == NONE else ()), x.dtype


def _nll_kernel(x, t, w, reduction, ignore_index):
    cdim = 0 if x.ndim == 1 else 1
    valid = t != ignore_index       # the meta checked the class range (check=True)
    comp = _comp_np(x.dtype)
    tc = np.where(valid, t, 0).astype(np.intp)
    picked = np.take_along_axis(x, np.expand_dims(tc, cdim), cdim)
    picked = np.squeeze(picked, cdim).astype(comp, copy=False)
    wv = valid.astype(comp) if w is None else w.astype(comp, copy=False)[tc] * valid
    loss = -picked * wv
    if reduction == SUM:
        loss = np.asarray(loss.sum(), comp)
    elif reduction == MEAN:
        with np.errstate(invalid="ignore", divide="ignore"):
            loss = np.asarray(loss.sum() / wv.sum(), comp)
    return loss.astype(x.dtype, copy=False)


def _nll_weights(dtype, t, w, ignore_index):
    """Per-target weights (0 at ignore_index) and the clamped class index."""
    from .indexing import where
    valid = t != ignore_index
    tc = where(valid, t, t.new_zeros(())).to(D.int64)
    wv = valid.to(dtype) if w is None else w[tc] * valid
    return wv, tc, valid


def _nll_decomp(x, t, w, reduction, ignore_index):
    cdim = 0 if x.dim() == 1 else 1
    wv, tc, _ = _nll_weights(x.dtype, t, w, ignore_index)
    loss = -x.gather(cdim, tc.unsqueeze(cdim)).squeeze(cdim) * wv
    if reduction == MEAN:
        return loss.sum() / wv.sum()
    return _reduce(loss, reduction)


def _nll_vjp(ctx, g):
    """nll_loss_backward: -g * w[t] at the target class (divided by the total weight for
    'mean'), zero elsewhere; written with scatter so that it is differentiable in g."""
    _, t, w, reduction, ignore_index = ctx.args
    cdim = 0 if len(ctx.shapes[0]) == 1 else 1
    wv, tc, valid = _nll_weights(ctx.dtypes[0], t, w, ignore_index)
    if reduction == MEAN:     # ignored targets get no gradient, even when 0/0 (all ignored)
        from .indexing import where
        coeff = where(valid, -g * wv / wv.sum(), g.new_zeros(()))
    else:
        coeff = -g * wv
    gx = g.new_zeros(ctx.shapes[0], dtype=ctx.dtypes[0]).scatter(cdim, tc.unsqueeze(cdim),
                                                           coeff.unsqueeze(cdim).to(ctx.dtypes[0]))
    return gx, None, None, None, None


NLL_LOSS = register("nll_loss", _nll_kernel, meta=_nll_meta, vjp=_nll_vjp, decomp=_nll_decomp,
                    save=(1, 2), amp_policy="fp32", check=True, tags=("gather",),
                    schema="nll_loss(Tensor self, Tensor target, Tensor? weight=None, "
                           "int reduction=1, SymInt ignore_index=-100) -> Tensor")


# ----------------------------------------------------------------- cross_entropy

def _cross_entropy(x, t, w, reduction, ignore_index, label_smoothing):
    from .activation import log_softmax
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if x.dim() == 1 else 1
    if tuple(x.shape) == tuple(t.shape):
        return _ce_probs(x, t, w, reduction, ignore_index, label_smoothing, cdim)
    if x.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    lsm = log_softmax(x, cdim)
    nll = NLL_LOSS(lsm, t, w, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    return _ce_smoothing(lsm, t, w, reduction, ignore_index, label_smoothing, cdim, nll)


def _class_view(w, x, cdim):
    shape = [1] * x.dim()
    shape[cdim] = x.shape[cdim]
    return w.reshape(shape)


def _ce_probs(x, t, w, reduction, ignore_index, ls, cdim):
    from .activation import log_softmax
    if not t.dtype.is_floating_point:
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {_type_name(t.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    c = x.shape[cdim]
    lsm = log_softmax(x, cdim)
    if ls > 0:
        t = t * (1 - ls) + ls / c
    if w is not None:
        if not (w.dim() <= 1 and w.numel() == c):
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or "
                               f"no classes but got weight tensor of shape: {list(w.shape)}")
        lsm = lsm * _class_view(w, x, cdim)
    prod = lsm * t
    if reduction == MEAN:
        return -prod.sum() / (x.numel() / c if c else 0.0)
    if reduction == SUM:
        return -prod.sum()
    return -prod.sum(cdim)


def _ce_smoothing(lsm, t, w, reduction, ignore_index, ls, cdim, nll):
    c = lsm.shape[cdim]
    ignore = t == ignore_index
    src = lsm if w is None else lsm * _class_view(w, lsm, cdim)
    smooth = (-src.sum(cdim)).masked_fill(ignore, 0.0)
    if reduction == MEAN:
        if w is not None:
            wv, _, _ = _nll_weights(lsm.dtype, t, w, ignore_index)
            ret = smooth.sum() / wv.sum()
        else:
            ret = smooth.sum() / (~ignore).sum()
    else:
        ret = _reduce(smooth, reduction)
    return (1 - ls) * nll + ret * (ls / c)


CROSS_ENTROPY = _composite("cross_entropy_loss", _cross_entropy,
                           schema="cross_entropy_loss(Tensor self, Tensor target, "
                                  "Tensor? weight=None, int reduction=1, "
                                  "SymInt ignore_index=-100, float label_smoothing=0.) -> Tensor")
_ce_graph_vjp = CROSS_ENTROPY.vjp


def _ce_vjp(ctx, g):
    """Class-index targets without smoothing: PyTorch's fused formula,
    g * w[t] / total * (softmax(x) - onehot(t)) (zero at ignore_index), in ember ops, so it
    stays differentiable; it runs softmax once instead of rebuilding and differentiating
    the log_softmax + nll_loss graph. Other cases differentiate the composite."""
    x, t, w, reduction, ignore_index, ls = ctx.args
    need = ctx.needs_input_grad
    if ls > 0 or x.dim() == 0 or tuple(x.shape) == tuple(t.shape) or not need[0] or \
            (w is not None and need[2]) or x.dtype != g.dtype:
        return _ce_graph_vjp(ctx, g)
    from .activation import softmax
    from .indexing import where
    cdim = 0 if x.dim() == 1 else 1
    wv, tc, valid = _nll_weights(x.dtype, t, w, ignore_index)
    if reduction == MEAN:     # ignored targets get no gradient, even when 0/0 (all ignored)
        coeff = where(valid, -g * wv / wv.sum(), g.new_zeros(()))
    else:
        coeff = -g * wv
    coeff = coeff.unsqueeze(cdim)
    gx = softmax(x, cdim) * -coeff
    gx = gx.scatter_add(cdim, tc.unsqueeze(cdim), coeff)
    return gx, None, None, None, None, None


CROSS_ENTROPY.vjp = _ce_vjp


# ------------------------------------------------------------------------- CTC

def _ctc_check(lp, targets, il, tl, blank):
    if not lp.dtype.is_floating_point or lp.dtype.itemsize == 2:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{_type_name(lp.dtype)}'")
    if lp.dim() != 3:
        raise RuntimeError(f"log_probs must be 3-D (batch_size, input length, num_labels), but "
                           f"got: {lp.dim()}")
    tsteps, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #2 'targets' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{_type_name(targets.dtype)}")
    for b in range(n):
        if il[b] > tsteps or il[b] < 0:
            raise RuntimeError(f"Expected input_lengths to have value at most {tsteps}, but got "
                               f"value {il[b]} (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
        if tl[b] < 0:
            raise RuntimeError(f"Expected target_lengths to be nonnegative, but got {tl[b]}")
    if targets.dim() == 1:
        if targets.shape[0] < sum(tl):
            raise RuntimeError(f"Expected tensor to have size at least {sum(tl)} at dimension 0,"
                               f" but got size {targets.shape[0]} for argument #2 'targets' "
                               "(while checking arguments for ctc_loss_cpu)")
    elif targets.dim() == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                               f"{targets.shape[0]} for argument #2 'targets' (while checking "
                               "arguments for ctc_loss_cpu)")
        mx = max(tl, default=0)
        if targets.shape[1] < mx:
            raise RuntimeError(f"Expected tensor to have size at least {mx} at dimension 1, but "
                               f"got size {targets.shape[1]} for argument #2 'targets' (while "
                               "checking arguments for ctc_loss_cpu)")
    else:
        raise RuntimeError("targets must be 1-D (concatenated) or 2-D (padded)")


def _ctc_meta(lp, targets, il, tl, blank, zero_infinity):
    _ctc_check(lp, targets, il, tl, blank)
    tsteps, n, _ = lp.shape
    return ((n,), lp.dtype), ((n, tsteps, 2 * max(tl, default=0) + 1), lp.dtype)


def _ctc_extended(targets, tl, blank, n):
    """Extended label sequences l' = (blank, l1, blank, l2, ..., blank), padded: (N, S)."""
    mx = max(tl, default=0)
    s = 2 * mx + 1
    ext = np.full((n, s), blank, dtype=np.intp)
    if targets.ndim == 1:
        offs = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.intp)
    for b in range(n):
        lab = targets[offs[b]:offs[b] + tl[b]] if targets.ndim == 1 else targets[b, :tl[b]]
        ext[b, 1:2 * tl[b]:2] = lab
    # s-2 transitions: allowed into a label that differs from the label two places back
    skip = np.zeros((n, s), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(s)[None, :] < (2 * np.asarray(tl, dtype=np.intp)[:, None] + 1)
    return ext, skip, valid


def _lse3(a, b, c):
    m = np.maximum(np.maximum(a, b), c)
    mm = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - mm) + np.exp(b - mm) + np.exp(c - mm)) + mm


def _ctc_kernel(lp, targets, il, tl, blank, zero_infinity):
    tsteps, n, _ = lp.shape
    ext, skip, valid = _ctc_extended(targets, tl, blank, n)
    s = ext.shape[1]
    ninf = -np.inf
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (tsteps, n, s)), 2)  # (T, N, S)
    alpha = np.full((n, tsteps, s), ninf, dtype=lp.dtype)
    if tsteps:
        a0 = np.full((n, s), ninf, dtype=lp.dtype)
        a0[:, 0] = lpe[0, :, 0]
        if s > 1:
            a0[:, 1] = np.where(np.asarray(tl) > 0, lpe[0, :, 1], ninf)
        alpha[:, 0] = a0
    for t in range(1, tsteps):
        prev = alpha[:, t - 1]
        p1 = np.concatenate([np.full((n, 1), ninf), prev[:, :-1]], 1)
        p2 = np.concatenate([np.full((n, 2), ninf), prev[:, :-2]], 1)[:, :s]
        p2 = np.where(skip, p2, ninf)
        alpha[:, t] = np.where(valid, lpe[t] + _lse3(prev, p1, p2), ninf)
    nll = np.empty(n, dtype=lp.dtype)
    for b in range(n):
        L, T = tl[b], il[b]
        if T == 0:
            nll[b] = 0.0 if L == 0 else np.inf
            continue
        last = alpha[b, T - 1]
        end = last[2 * L] if L == 0 else np.logaddexp(last[2 * L], last[2 * L - 1])
        nll[b] = -end
    return nll, alpha


def _ctc_vjp(ctx, g, _galpha=None):
    lp, targets, il, tl, blank, zero_infinity = ctx.args
    nll, alpha = ctx.out
    return (CTC_BACKWARD(g, lp, targets, il, tl, nll, alpha, blank, zero_infinity),
            None, None, None, None, None)


CTC = register("_ctc_loss", _ctc_kernel, meta=_ctc_meta, vjp=_ctc_vjp, save_out=True,
               nondiff_outputs=(1,), amp_policy="fp32", check=True,
               tags=("prim", "gather", "reduction"),
               schema="_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, "
                      "int[] target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, "
                      "Tensor)")


def _ctc_backward_kernel(g, lp, targets, il, tl, nll, alpha, blank, zero_infinity):
    tsteps, n, c = lp.shape
    ext, skip, valid = _ctc_extended(targets, tl, blank, n)
    s = ext.shape[1]
    ninf = -np.inf
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (tsteps, n, s)), 2)
    il_a = np.asarray(il, dtype=np.intp)
    tl_a = np.asarray(tl, dtype=np.intp)
    # skip into s+2 from s: allowed when l'_{s+2} may skip over, i.e. skip[:, s+2]
    skip_fwd = np.zeros((n, s), dtype=bool)
    skip_fwd[:, :-2] = skip[:, 2:]
    beta = np.full((n, tsteps, s), ninf, dtype=lp.dtype)
    nxt = np.full((n, s), ninf, dtype=lp.dtype)
    rows = np.arange(n)
    for t in range(tsteps - 1, -1, -1):
        n1 = np.concatenate([nxt[:, 1:], np.full((n, 1), ninf)], 1)
        n2 = np.concatenate([nxt[:, 2:], np.full((n, 2), ninf)], 1)
        n2 = np.where(skip_fwd, n2, ninf)
        cur = np.where(valid, lpe[t] + _lse3(nxt, n1, n2), ninf)
        init = np.full((n, s), ninf, dtype=lp.dtype)
        init[rows, 2 * tl_a] = lpe[t, rows, 2 * tl_a]
        has = tl_a > 0
        init[rows[has], 2 * tl_a[has] - 1] = lpe[t, rows[has], 2 * tl_a[has] - 1]
        cur = np.where((t == il_a - 1)[:, None], init, np.where((t < il_a - 1)[:, None], cur, ninf))
        beta[:, t] = cur
        nxt = cur
    ab = np.transpose(alpha + beta, (1, 0, 2))           # (T, N, S)
    m = np.max(ab, axis=2, keepdims=True) if s else np.zeros((tsteps, n, 1))
    m = np.where(np.isfinite(m), m, 0.0)
    onehot = (ext[:, :, None] == np.arange(c)).astype(lp.dtype)    # (N, S, C)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        summed = np.einsum("tns,nsc->tnc", np.exp(ab - m), onehot)
        lcab = np.log(summed) + m
        grad = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    grad = grad * g[None, :, None]
    live = np.arange(tsteps)[:, None] < il_a[None, :]
    if zero_infinity:
        live = live & np.isfinite(nll)[None, :]
    return np.where(live[:, :, None], grad, 0).astype(lp.dtype, copy=False)


def _ctc_backward_meta(g, lp, targets, il, tl, nll, alpha, blank, zero_infinity):
    return tuple(lp.shape), lp.dtype


CTC_BACKWARD = register("_ctc_loss_backward", _ctc_backward_kernel, meta=_ctc_backward_meta,
                        tags=("prim", "scatter"),
                        schema="_ctc_loss_backward(Tensor grad, Tensor log_probs, "
                               "Tensor targets, int[] input_lengths, int[] target_lengths, "
                               "Tensor neg_log_likelihood, Tensor log_alpha, int blank, "
                               "bool zero_infinity=False) -> Tensor")
